// reverse reverses in place and returns the array.
const a = [1, 2, 3, 4];
const r = a.reverse();
console.log(a, r === a);
console.log([].reverse(), [1].reverse());
console.log(["a", "b", "c"].reverse().join(""));
