// Indentation with a string, which is cut to 10 characters.
const v = { a: [1, { b: 2 }] };
console.log(JSON.stringify(v, null, "\t"));
console.log(JSON.stringify(v, null, "--"));
console.log(JSON.stringify(v, null, "0123456789abc"));
console.log(JSON.stringify(v, null, ""));
