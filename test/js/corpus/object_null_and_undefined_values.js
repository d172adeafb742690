// Properties holding null and undefined.
const o = { a: null, b: undefined };
console.log(o);
console.log(Object.keys(o));
console.log(JSON.stringify(o));
console.log(o.a ?? "default", o.b ?? "default", o.c ?? "default");
console.log("b" in o, o.b === undefined);
