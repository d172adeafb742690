// expect: 4:11 Symbol
// anchor: Symbol
// Symbol is out.
const s = Symbol("id");
console.log(s);
