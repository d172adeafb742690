// Keys added during for...in are not visited.
const o = { a: 1, b: 2 };
const seen = [];
for (const k in o) {
  seen.push(k);
  o["new_" + k] = 0;
}
console.log(seen);
console.log(Object.keys(o));
