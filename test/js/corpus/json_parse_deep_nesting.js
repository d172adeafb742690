// Deeply nested arrays parse and stringify back.
const depth = 200;
const text = "[".repeat(depth) + "]".repeat(depth);
const v = JSON.parse(text);
console.log(JSON.stringify(v) === text);
let d = 0;
let cur = v;
while (cur.length > 0) {
  cur = cur[0];
  d++;
}
console.log(d);
