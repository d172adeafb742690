// expect: 4:17 Unicode property escapes
// anchor: /\p{L}+/u
// Unicode property escapes (\p{...}) are refused: the engine has no property tables.
const letters = /\p{L}+/u;
console.log(letters.test("abc"));
