// expect: 4:15 BigInt
// anchor: 10n
// BigInt literals are out.
const large = 10n;
console.log(large);
