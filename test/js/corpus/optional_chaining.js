// ?. stops at null and undefined.
const o = { a: { b: { c: 1 } }, list: [10, 20], fn: (x) => x * 2, nil: null };
console.log(o?.a?.b?.c);
console.log(o.x?.y.z);
console.log(o.nil?.anything);
console.log(o.list?.[1]);
console.log(o.missing?.[0]);
console.log(o.fn?.(21));
console.log(o.nofn?.(21));
const n = null;
console.log(n?.a, n?.[0], n?.());
console.log(o.a?.["b"]?.c);
