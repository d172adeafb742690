// Long strings with newlines inside structures are split into concatenated pieces.
const text = "first line of text that is long\nsecond line that is also long\nthird";
console.log({ text });
console.log([text]);
console.log({ short: "a\nb" });
console.log({ long: "z".repeat(100) });
