// replace with a string pattern replaces the first match only.
console.log("a-b-c".replace("-", "+"));
console.log("aaa".replace("a", "b"));
console.log("abc".replace("x", "y"));
console.log("abc".replace("", "_"));
console.log("a.b.c".replace(".", ""));
console.log("hello".replace("l", "L"));
