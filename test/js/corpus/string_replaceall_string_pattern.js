// replaceAll with a string pattern replaces every match.
console.log("a-b-c".replaceAll("-", "+"));
console.log("aaa".replaceAll("a", "bb"));
console.log("aaaa".replaceAll("aa", "a"));
console.log("abc".replaceAll("", "_"));
console.log("x.y.z".replaceAll(".", ""));
console.log("😀a😀".replaceAll("😀", "!"));
