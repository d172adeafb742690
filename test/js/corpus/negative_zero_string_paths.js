// String conversion turns -0 into "0".
const z = -0;
console.log(String(z));
console.log(`${z}`);
console.log("" + z);
console.log([z].join());
console.log([z, 1].join("|"));
console.log(String([z]));
console.log(JSON.stringify(z));
console.log(JSON.stringify([z, { z }]));
console.log(z.toFixed(2));
console.log(z === 0);
