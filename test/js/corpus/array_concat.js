// concat flattens array arguments one level.
const a = [1, 2];
console.log(a.concat(3, [4, 5], [[6]]));
console.log(a.concat());
console.log([].concat([], []));
console.log(a.concat("s", null, { x: 1 }));
console.log(a);
