// ?? only falls through on null and undefined.
console.log(null ?? "d", undefined ?? "d", 0 ?? "d", "" ?? "d", false ?? "d", NaN ?? "d");
const o = { a: null, b: 0 };
console.log(o.a ?? 1, o.b ?? 1, o.c ?? 1);
console.log((null ?? undefined) ?? "last");
let calls = 0;
const f = () => {
  calls++;
  return 5;
};
console.log(1 ?? f(), calls);
