// Strings inside structures are quoted with single quotes.
console.log(["a", "b"]);
console.log({ s: "x" });
console.log(["it's"]);
console.log(["say \"hi\""]);
console.log(["both ' and \""]);
console.log(["all ' \" `"]);
console.log([""]);
