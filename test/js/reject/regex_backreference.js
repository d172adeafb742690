// expect: 4:15 back-references
// anchor: /(a)\1/
// A back-reference needs backtracking: sluice's regular expressions run in linear time.
const twice = /(a)\1/;
console.log(twice.test("aa"));
