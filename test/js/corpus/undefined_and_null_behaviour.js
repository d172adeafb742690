// undefined and null in operations.
console.log(undefined === undefined, null === null, undefined == null);
console.log(typeof undefined, typeof null);
console.log(undefined + "", null + "", [undefined, null].join("-"));
console.log(null + 1, undefined + 1, null * 5);
let u;
console.log(u, u === undefined);
const o = {};
console.log(o.nothing, [][0]);
