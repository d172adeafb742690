// Number.parseInt radix edge cases: 0, 1, 37, non-integers and strings.
console.log(Number.parseInt("10", 0));
console.log(Number.parseInt("10", 1));
console.log(Number.parseInt("10", 37));
console.log(Number.parseInt("10", 2.9));
console.log(Number.parseInt("10", "16"));
console.log(Number.parseInt("10", undefined));
console.log(Number.parseInt("10", NaN));
console.log(Number.parseInt("10", -1));
console.log(Number.parseInt("0x10", 10));
console.log(Number.parseInt("0b11"));
console.log(Number.parseInt("0o17"));
console.log(Number.parseInt("10", 4294967312));
