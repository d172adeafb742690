// get of a missing key is undefined; has distinguishes a stored undefined.
const m = new Map([["u", undefined]]);
console.log(m.get("u"), m.has("u"), m.get("v"), m.has("v"));
