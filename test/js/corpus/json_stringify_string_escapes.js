// JSON.stringify escapes quotes, backslashes and control characters.
console.log(JSON.stringify("quote \" backslash \\ slash /"));
console.log(JSON.stringify("\b\f\n\r\t"));
console.log(JSON.stringify("\u0000\u0001\u001f\u007f"));
console.log(JSON.stringify("\u2028\u2029"));
console.log(JSON.stringify("é日😀"));
console.log(JSON.stringify("<script>&'"));
console.log(JSON.stringify({ "ke\"y": "v\nal" }));
