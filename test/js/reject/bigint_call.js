// expect: 4:15 BigInt
// anchor: BigInt
// The BigInt function is out.
const large = BigInt(10);
console.log(large);
