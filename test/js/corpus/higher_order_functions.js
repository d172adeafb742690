// Functions passed as values.
const apply = (f, x) => f(x);
const twice = (f) => (x) => f(f(x));
console.log(apply(Math.abs, -3));
console.log(twice((x) => x + 3)(1));
const ops = [Math.floor, Math.ceil, Math.round];
console.log(ops.map((op) => op(2.5)));
console.log(["1", "2", "3"].map(Number.parseFloat));
console.log(["1", "2", "3"].map((s) => Number.parseInt(s)));
console.log(["10", "10", "10"].map(Number.parseInt));
