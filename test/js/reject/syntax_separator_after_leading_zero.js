// expect: 4:12 Numeric separator
// anchor: _
// A numeric separator may not follow a leading 0.
const a = 0_0;
console.log(a);
