// instanceof for builtin types.
console.log([] instanceof Array, [] instanceof Object);
console.log({} instanceof Object, {} instanceof Array);
console.log(new Map() instanceof Map, new Set() instanceof Set, new Map() instanceof Set);
const e = new TypeError("t");
console.log(e instanceof TypeError, e instanceof Error, e instanceof RangeError);
console.log(new SyntaxError("s") instanceof Error, new RangeError("r") instanceof RangeError);
const f = () => 1;
console.log(f instanceof Object);
console.log("s" instanceof Object, 1 instanceof Object);
