// Objects break onto several lines once they pass the line width.
const o = {};
for (let i = 0; i < 6; i++) o["key" + i] = "value" + i;
console.log(o);
const p = {};
for (let i = 0; i < 12; i++) p["k" + i] = i;
console.log(p);
const q = { alpha: "aaaaaaaaaaaaaaa", beta: "bbbbbbbbbbbbbbb", gamma: "ccccccccccccc" };
console.log(q);
const r = { alpha: "aaaaaaaaaaaaaaa", beta: "bbbbbbbbbbbbbbb", gamma: "cccccccccccccccc" };
console.log(r);
