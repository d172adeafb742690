// Shortest round-trip digit strings.
console.log(1 / 3);
console.log(2 / 3);
console.log(10 / 3);
console.log(100 / 7);
console.log(Math.PI);
console.log(Math.E);
console.log(5e-7 * 3);
console.log(9007199254740993);
console.log(9007199254740992 + 1);
console.log(9007199254740991);
console.log(0.1 * 0.1);
console.log(123.456e5);
console.log(1 / 1024);
