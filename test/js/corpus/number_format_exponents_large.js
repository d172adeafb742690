// Large numbers switch to exponent notation at 1e21.
console.log(1e20);
console.log(1e21);
console.log(1e22);
console.log(123456789012345680000);
console.log(999999999999999900000);
console.log(1.5e21);
console.log(-1e21);
console.log(2e100);
console.log(1.7976931348623157e308);
console.log(12345678901234567890123);
console.log(1e300 * 10);
