// Callbacks run in array order.
const log = [];
[3, 1, 2].forEach((x) => log.push("each " + x));
[3, 1, 2].map((x) => log.push("map " + x));
[3, 1, 2].filter((x) => log.push("filter " + x));
console.log(log.join("; "));
