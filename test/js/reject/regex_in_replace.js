// expect: 5:23 regular expression|regex|RegExp
// anchor: /-/
// A regex literal as an argument is out too.
const s = "a-b-c";
console.log(s.replace(/-/g, "+"));
