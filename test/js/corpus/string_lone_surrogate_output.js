// Printing a lone surrogate writes U+FFFD to stdout; JSON escapes it.
const hi = "\ud83d";
console.log(hi);
console.log("a" + hi + "b");
console.log(JSON.stringify(hi));
console.log(hi.length);
console.log(["x", hi]);
console.log({ k: "\udc00" });
