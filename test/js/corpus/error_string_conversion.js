// Errors convert to "Name: message" strings.
console.log(String(new Error("boom")));
console.log(`${new TypeError("bad")}`);
console.log("" + new RangeError(""));
console.log(String(new Error()));
console.log([new SyntaxError("s")].join());
