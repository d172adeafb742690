// Operator precedence and associativity.
console.log(2 + 3 * 4);
console.log((2 + 3) * 4);
console.log(10 - 4 - 3);
console.log(100 / 10 / 5);
console.log(2 * 3 % 4);
console.log(-2 * -3);
console.log(- -5);
console.log(+"3" + 4);
console.log(1 + 2 + "3");
console.log("1" + 2 + 3);
console.log(10 - "3");
console.log("6" * "7");
