// for...of over keys(), values() and entries() of Maps and Sets.
const m = new Map([["a", 1], ["b", 2]]);
for (const k of m.keys()) console.log("key", k);
for (const v of m.values()) console.log("value", v);
for (const [k, v] of m.entries()) console.log("entry", k, v);
const s = new Set([5, 6]);
for (const v of s.values()) console.log("set value", v);
for (const e of s.entries()) console.log("set entry", e);
for (const k of s.keys()) console.log("set key", k);
