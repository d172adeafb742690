// for...of over arrays, strings, Maps and Sets.
for (const x of [1, 2]) console.log("array", x);
for (const c of "hé") console.log("string", c);
for (const [k, v] of new Map([["a", 1], ["b", 2]])) console.log("map", k, v);
for (const v of new Set(["x", "y", "x"])) console.log("set", v);
for (const e of new Map([["k", "v"]])) console.log("entry", e);
