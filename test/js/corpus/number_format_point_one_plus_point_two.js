// The classic binary-fraction sums print with every digit needed to round-trip.
console.log(0.1 + 0.2);
console.log(0.1 + 0.7);
console.log(0.3 - 0.1);
console.log(1.1 * 3);
console.log(0.1 * 3);
console.log(0.2 + 0.4);
console.log(1 - 0.9);
console.log(4.35 * 100);
console.log(1.005 * 1000);
console.log(0.1 + 0.2 === 0.3);
