// Number.isInteger and Number.isFinite do not convert their argument.
const vals = [0, -0, 1, 1.5, -3, 1e21, 2.0, NaN, Infinity, -Infinity, "5", null, undefined,
  true, 9007199254740992, 0.1 + 0.2];
for (const v of vals) {
  console.log(v, Number.isInteger(v), Number.isFinite(v));
}
