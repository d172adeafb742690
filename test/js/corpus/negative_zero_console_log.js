// console.log prints -0 as -0, everywhere it appears in a structure.
console.log(-0);
console.log(0 * -1);
console.log([-0]);
console.log({ z: -0 });
console.log([0, -0, 0]);
console.log(-0, 0);
console.log(Math.round(-0.4));
console.log(-0 + 0);
console.log(-0 - 0);
