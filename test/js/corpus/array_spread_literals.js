// Spread in array literals.
const a = [1, 2];
const b = [3, 4];
console.log([...a, ...b]);
console.log([0, ...a, 9]);
console.log([..."hi"]);
console.log([...new Set([1, 1, 2])]);
console.log([...new Map([[1, "one"]])]);
console.log([...[]]);
const copy = [...a];
copy.push(5);
console.log(a, copy);
