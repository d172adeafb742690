// Error objects have no own enumerable properties by default.
console.log(JSON.stringify(new Error("boom")));
console.log(JSON.stringify({ e: new TypeError("t") }));
const e = new RangeError("r");
console.log(JSON.stringify({ name: e.name, message: e.message }));
