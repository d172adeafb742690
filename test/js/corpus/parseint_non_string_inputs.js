// Number.parseInt converts its argument to a string first.
console.log(Number.parseInt(0.0000005));
console.log(Number.parseInt(0.000005));
console.log(Number.parseInt(1e21));
console.log(Number.parseInt(123.9));
console.log(Number.parseInt(-0));
console.log(Number.parseInt(null));
console.log(Number.parseInt(undefined));
console.log(Number.parseInt(true));
console.log(Number.parseInt([12, 34]));
console.log(Number.parseInt("Infinity"));
console.log(Number.parseInt("12e3"));
console.log(Number.parseInt("9007199254740993"));
console.log(Number.parseInt("123456789012345678901234567890"));
