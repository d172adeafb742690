// typeof of various property values.
const o = { n: 1, s: "x", b: true, u: undefined, nl: null, f: () => 1, a: [], o: {} };
for (const k of Object.keys(o)) console.log(k, typeof o[k]);
