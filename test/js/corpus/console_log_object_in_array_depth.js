// Objects inside arrays inside objects count toward depth.
console.log({ list: [{ inner: { x: 1 } }] });
console.log([[{ a: { b: 1 } }]]);
