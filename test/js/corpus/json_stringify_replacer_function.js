// A replacer function sees the root under the key "" and can drop or change values.
const seen = [];
const out = JSON.stringify({ a: 1, b: [2, 3], c: { d: "x" } }, (k, v) => {
  seen.push(JSON.stringify(k));
  if (k === "a") return undefined;
  if (typeof v === "number") return v * 10;
  return v;
});
console.log(out);
console.log(seen.join(" "));
console.log(JSON.stringify(5, (k, v) => (k === "" ? [v, v] : v)));
console.log(JSON.stringify({ a: 1 }, (k, v) => (k === "" ? undefined : v)));
