// Sets of strings with non-ASCII content.
const s = new Set(["é", "e\u0301", "é", "😀"]);
console.log(s.size, s);
