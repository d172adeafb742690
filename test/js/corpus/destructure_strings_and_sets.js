// Array patterns work on any iterable.
const [c1, c2] = "😀é";
console.log(c1.length, c2);
const [s1, ...srest] = new Set([3, 3, 4, 5]);
console.log(s1, srest);
