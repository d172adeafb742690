// includes finds NaN; indexOf does not.
const xs = [1, NaN, 3, -0];
console.log(xs.includes(NaN), xs.indexOf(NaN));
console.log(xs.includes(0), xs.indexOf(0));
console.log(xs.includes("1"), xs.indexOf("1"));
console.log([1, 2, 3].indexOf(3, -1), [1, 2, 3].includes(1, 1));
console.log([undefined].includes(), [null].indexOf(undefined));
