// Map forEach passes (value, key, map).
const m = new Map([["x", 1], ["y", 2]]);
m.forEach((v, k, map) => console.log(k, v, map === m));
