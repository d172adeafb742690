// forEach visits each element with its index and returns undefined.
const seen = [];
const r = ["a", "b", "c"].forEach((v, i, arr) => {
  seen.push(i + ":" + v + ":" + arr.length);
});
console.log(seen);
console.log(r);
