// expect: 4:15 regular expression|regex|RegExp
// anchor: RegExp
// The RegExp builtin is out.
const maker = RegExp;
console.log(maker);
