// Empty arrays and objects nested inside indented output stay on one line.
console.log(JSON.stringify({ a: [], b: {}, c: [[], {}], d: [{}] }, null, 2));
