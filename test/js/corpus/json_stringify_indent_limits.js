// Numeric indents are clamped to 10; below 1 means no indentation.
const v = { a: [1] };
console.log(JSON.stringify(v, null, 20));
console.log(JSON.stringify(v, null, 0));
console.log(JSON.stringify(v, null, -3));
console.log(JSON.stringify(v, null, 3.7));
console.log(JSON.stringify(v, null, "3"));
console.log(JSON.stringify(v, null, true));
