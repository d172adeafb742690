// -0 equals 0 but divides into -Infinity.
const z = -0;
console.log(z === 0);
console.log(1 / z);
console.log(1 / z === -Infinity);
console.log(Math.sign(z));
console.log(Math.abs(z));
console.log(Math.max(z, 0));
console.log(Math.min(z, 0));
console.log([z].includes(0));
console.log([z].indexOf(0));
