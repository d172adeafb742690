// expect: 4:13 Symbol
// anchor: Symbol
// Well-known symbols are out too.
const key = Symbol.iterator;
console.log(key);
