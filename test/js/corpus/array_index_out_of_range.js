// Reading past the end gives undefined.
const a = [1, 2, 3];
console.log(a[3], a[-1], a[100]);
console.log(a["1"], a["01"]);
console.log(a[1.5]);
