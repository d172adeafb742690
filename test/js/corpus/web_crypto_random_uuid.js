"use strict";
// crypto.randomUUID: version 4 UUIDs, lower-case, never repeated in a run. The values are
// random, so only their shape and distinctness are printed.
const re = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const seen = new Set();
let wellFormed = 0;
for (let i = 0; i < 2000; i++) {
  const u = crypto.randomUUID();
  if (re.test(u)) wellFormed++;
  seen.add(u);
}
console.log(wellFormed, seen.size, typeof crypto, typeof crypto.randomUUID, crypto.randomUUID.length);
// Each hex digit outside the fixed ones takes every value.
const digits = new Set();
for (const u of seen) for (const c of u.slice(0, 8)) digits.add(c);
console.log(digits.size);
