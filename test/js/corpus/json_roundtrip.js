// stringify then parse returns equal data.
const data = { n: [1, -2.5, 1e21, 0.1], s: "é\n\"😀", b: [true, false], z: null, o: { a: {} } };
const text = JSON.stringify(data);
console.log(text);
console.log(JSON.stringify(JSON.parse(text)) === text);
console.log(JSON.parse(text));
