// Large integers below 1e21 print in full.
console.log(2147483647);
console.log(2147483648);
console.log(4294967296);
console.log(9007199254740992);
console.log(18014398509481984);
console.log(1e15 + 0.3);
console.log(1e16 + 1);
console.log(123456789012345678);
console.log(100000000000000000000);
