// indexOf and lastIndexOf with positions.
const s = "abcabcabc";
console.log(s.indexOf("c"), s.indexOf("c", 3), s.indexOf("c", 100), s.indexOf("z"));
console.log(s.lastIndexOf("c"), s.lastIndexOf("c", 7), s.lastIndexOf("c", 1));
console.log(s.indexOf(""), s.indexOf("", 4), s.indexOf("", 100));
console.log(s.lastIndexOf(""), s.lastIndexOf("", 2));
console.log(s.indexOf("bca"), s.lastIndexOf("bca"));
console.log(s.indexOf("a", -5));
console.log("aaa".lastIndexOf("a", -1));
console.log("日本語日本".indexOf("本"), "日本語日本".lastIndexOf("本"));
console.log("x😀y".indexOf("y"));
