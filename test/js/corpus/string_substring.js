// substring swaps its arguments and clamps negatives to 0.
const s = "abcdef";
console.log(s.substring(2));
console.log(s.substring(4, 2));
console.log(s.substring(-3, 2));
console.log(s.substring(2, -1));
console.log(s.substring(1, 100));
console.log(s.substring(NaN, 2));
console.log(JSON.stringify(s.substring(3, 3)));
