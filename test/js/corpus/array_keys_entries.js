// keys and entries iterate indexes and [index, value] pairs.
const a = ["x", "y", "z"];
console.log([...a.keys()]);
console.log([...a.entries()]);
for (const [i, v] of a.entries()) {
  console.log(i, v);
}
for (const k of a.keys()) {
  console.log(typeof k);
}
