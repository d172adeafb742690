"use strict";
// atob and btoa as node 20 has them: forgiving base64, white space skipped, node's errors in
// node's order. A seeded generator draws inputs from the alphabet, padding, white space and
// characters outside it, so most of the error paths are crossed.
const show = (f, s) => {
  try {
    return JSON.stringify(f(s));
  } catch (e) {
    return `${e.name}: ${e.message} (${e.code}) ${e instanceof Error}`;
  }
};
for (const s of ["", "a", "ab", "abc", "hello world", "\u00ff\u0000\u0080", "€", "\u0100", 123, null, undefined, true]) {
  console.log(show(btoa, s));
}
const fixed = ["", "YQ==", "YQ", "YWI=", "YWJj", " Y W J j ", "YQ=", "Y", "YQ===", "!!!!", "YR==",
  "\u00e9", "YQ\t\n==", "Y===", "YW=J", "YW\fJj\r", "====", "A", "AA", "AAA", "AAAA", "-_", "YQ==YQ=="];
for (const s of fixed) console.log(JSON.stringify(s), show(atob, s));
let seed = 12345;
const next = (n) => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed % n;
};
const pieces = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/==== \t\n\f\r-_.é";
const counts = new Map();
for (let i = 0; i < 3000; i++) {
  let s = "";
  const len = next(10);
  for (let j = 0; j < len; j++) s += pieces[next(pieces.length)];
  const r = show(atob, s);
  const key = r.startsWith('"') ? "ok" : r;
  counts.set(key, (counts.get(key) ?? 0) + 1);
  if (i % 150 === 0) console.log(JSON.stringify(s), r);
  if (r.startsWith('"')) {
    const back = atob(btoa(atob(s)));
    if (back !== atob(s)) console.log("round trip differs", JSON.stringify(s));
  }
}
console.log([...counts].sort());
let all = "";
for (let c = 0; c < 256; c++) all += String.fromCharCode(c);
console.log(btoa(all));
console.log(atob(btoa(all)) === all, atob.length, btoa.length, atob.name, btoa.name);
