// Euclid's algorithm.
const gcd = (a, b) => (b === 0 ? a : gcd(b, a % b));
const lcm = (a, b) => (a / gcd(a, b)) * b;
console.log(gcd(48, 18), gcd(17, 5), gcd(0, 9), lcm(4, 6), lcm(21, 6));
console.log([12, 18, 24].reduce(gcd), [2, 3, 4, 5].reduce(lcm));
