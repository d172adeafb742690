// length counts UTF-16 code units.
console.log("".length);
console.log("abc".length);
console.log("héllo".length);
console.log("日本語".length);
console.log("😀".length);
console.log("a😀b".length);
console.log("👨‍👩‍👧".length);
console.log("é".length);
console.log("e\u0301".length);
