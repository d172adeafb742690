// undefined sorts to the end and is never passed to the comparator.
const xs = [3, undefined, 1, undefined, 2];
console.log(xs.slice().sort());
const seen = [];
const sorted = xs.slice().sort((a, b) => {
  if (a === undefined || b === undefined) seen.push("undefined seen");
  return a - b;
});
console.log(sorted, seen.length);
console.log([undefined, null, "null", "undefined"].sort());
