// Flattening a nested object into dotted keys.
const flatten = (o, prefix = "", out = {}) => {
  for (const [k, v] of Object.entries(o)) {
    const key = prefix === "" ? k : prefix + "." + k;
    if (v !== null && typeof v === "object" && !Array.isArray(v)) flatten(v, key, out);
    else out[key] = v;
  }
  return out;
};
console.log(flatten({ a: 1, b: { c: 2, d: { e: [3], f: null } }, g: {} }));
