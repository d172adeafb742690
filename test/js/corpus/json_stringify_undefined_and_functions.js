// undefined and functions are skipped in objects and become null in arrays.
const f = () => 1;
console.log(JSON.stringify({ a: undefined, b: f, c: 1 }));
console.log(JSON.stringify([undefined, f, 1]));
console.log(JSON.stringify({ a: undefined }));
console.log(JSON.stringify([undefined]));
console.log(JSON.stringify({ nested: { u: undefined, n: null } }));
