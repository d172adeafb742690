// Mixing numbers and strings in + and other operators.
console.log(1 + "2");
console.log("3" - 1);
console.log("3" * "4");
console.log("12" / "4");
console.log("7" % "4");
console.log("a" - 1);
console.log(null + 1);
console.log(undefined + 1);
console.log(true + 1);
console.log([] + 1);
console.log([2] * [3]);
console.log({} + "x");
console.log("5" + null);
console.log(1 + 2 + "px");
