// typeof for every kind of value, including undeclared names.
console.log(typeof 1, typeof "s", typeof true, typeof undefined, typeof null);
console.log(typeof {}, typeof [], typeof new Map(), typeof new Set());
console.log(typeof (() => 1), typeof console.log, typeof Math, typeof JSON);
console.log(typeof notDeclaredAnywhere);
console.log(typeof NaN, typeof Infinity);
console.log(typeof typeof 1);
function f() {}
console.log(typeof f);
console.log(typeof new Error("x"));
