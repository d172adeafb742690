// The builtin constructors' name and length, read through a variable.
console.log([Object, Array, String, Number, Boolean, Map, Set, Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError].map((f) => f.name + "/" + f.length).join(" "));
