// Keys that are not identifiers.
const o = { "a-b": 1, "with space": 2, "": 3, "é": 4, "$ok": 5, _u: 6, "1a": 7, "null": 8 };
console.log(o);
console.log(o[""], o["a-b"], o.null);
console.log(Object.keys(o).length);
