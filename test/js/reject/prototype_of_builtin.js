// expect: 4:20 prototype
// anchor: prototype
// Builtin prototypes are out as well.
const push = Array.prototype.push;
console.log(push);
