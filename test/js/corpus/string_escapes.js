// String literal escape sequences.
console.log("tab\there");
console.log("quote\"s and 'single'");
console.log('single \'quoted\'');
console.log("back\\slash");
console.log("\x41\x42");
console.log("\u0041\u{1F600}");
console.log("a\
b");
console.log("\0".length, "\0".charCodeAt(0));
console.log(JSON.stringify("\b\f\n\r\t\v"));
