// String methods convert non-string arguments.
console.log("a1b1c".split(1));
console.log("a1b".indexOf(1));
console.log("null".includes(null));
console.log("undefined".startsWith(undefined));
console.log("abc".slice("1"));
console.log("x".repeat("3"));
console.log("a".padStart("3", 0));
