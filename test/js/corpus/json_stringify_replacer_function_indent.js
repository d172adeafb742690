// Replacer function together with indentation.
const out = JSON.stringify(
  { keep: { n: 1, s: "t" }, drop: true, list: [1, "two", null] },
  (k, v) => (k === "drop" ? undefined : typeof v === "string" ? v.toUpperCase() : v),
  3,
);
console.log(out);
