// Integer arithmetic near 2^53 loses precision as doubles do.
const big = 9007199254740991;
console.log(big + 1);
console.log(big + 2);
console.log(big + 3);
console.log(big * 2);
console.log(big - 1);
console.log(Number.isInteger(big + 0.5));
console.log(2 * 9007199254740992 === 9007199254740992 * 2);
console.log(9007199254740993 === 9007199254740992);
