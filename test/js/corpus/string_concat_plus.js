// String concatenation with +.
const a = "foo";
const b = "bar";
console.log(a + b);
console.log(a + 1 + 2);
console.log(1 + 2 + a);
console.log(a + null + undefined + true);
console.log(a + [1, 2] + {});
console.log("" + -0 + "|" + 1e21 + "|" + 0.1);
