// split with a string separator.
console.log("a,b,c".split(","));
console.log("a,b,,c,".split(","));
console.log("abc".split(""));
console.log("abc".split());
console.log("".split(","));
console.log("".split(""));
console.log("a--b--c".split("--"));
console.log("a,b,c".split(",", 2));
console.log("a,b,c".split(",", 0));
console.log("one two  three".split(" "));
console.log("abc".split("abc"));
console.log("abc".split("x"));
