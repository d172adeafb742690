// Callbacks receive (element, index, array).
const a = ["p", "q"];
console.log(a.map((v, i, arr) => `${v}${i}${arr.length}`));
console.log(a.filter((v, i, arr) => arr[i] === v));
console.log(a.some((v, i) => i === 1));
console.log(a.find((v, i) => i === 1));
