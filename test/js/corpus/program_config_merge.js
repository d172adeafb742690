// Merging configuration objects recursively.
const merge = (a, b) => {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) {
    if (v && typeof v === "object" && !Array.isArray(v) && out[k] && typeof out[k] === "object") out[k] = merge(out[k], v);
    else out[k] = v;
  }
  return out;
};
const defaults = { port: 80, tls: { enabled: false, ciphers: ["a"] }, pools: { main: { size: 4 } } };
const user = { tls: { enabled: true }, pools: { main: { size: 8 }, extra: { size: 1 } }, port: 8080 };
console.log(merge(defaults, user));
console.log(defaults.tls.enabled);
