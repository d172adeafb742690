// name and message are ordinary properties.
const e = new Error("orig");
e.message = "changed";
console.log(e.message);
const t = new TypeError("x");
console.log(t.name + ": " + t.message);
const custom = new Error("with data");
custom.code = "E_CODE";
console.log(custom.code, Object.keys(custom));
