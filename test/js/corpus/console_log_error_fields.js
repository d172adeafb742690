// Errors are printed through their fields, never whole.
const e = new TypeError("bad thing");
console.log(e.name, e.message);
console.log(e.name + ": " + e.message);
console.log(typeof e, e instanceof Error);
console.log([e.message]);
