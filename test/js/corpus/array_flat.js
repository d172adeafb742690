// flat with default and explicit depths.
const nested = [1, [2, [3, [4, [5]]]]];
console.log(nested.flat());
console.log(nested.flat(2));
console.log(nested.flat(Infinity));
console.log(nested.flat(0));
console.log([[], [[]], [1]].flat());
console.log([["a"], "b"].flat());
