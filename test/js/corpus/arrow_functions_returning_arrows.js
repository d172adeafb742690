// Curried arrows.
const add = (a) => (b) => (c) => a + b + c;
console.log(add(1)(2)(3));
const compose = (f, g) => (x) => f(g(x));
const inc = (x) => x + 1;
const dbl = (x) => x * 2;
console.log(compose(inc, dbl)(5), compose(dbl, inc)(5));
