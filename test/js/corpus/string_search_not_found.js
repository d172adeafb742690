// Methods returning -1, false or undefined on a miss.
const s = "abc";
console.log(s.indexOf("d"), s.lastIndexOf("d"), s.includes("d"), s.at(3));
console.log(s.startsWith("b"), s.endsWith("a"));
console.log(JSON.stringify(s.charAt(5)), s.charCodeAt(5), s.codePointAt(5));
