// Builtin constructors printed by console.log; V8's Error shows its stackTraceLimit.
console.log(Object, Array, Map, Set, String, Number, Boolean);
console.log(Error, TypeError, RangeError);
console.log({ ctor: Error, other: SyntaxError });
