// expect: 4:17 regular expression|regex|RegExp
// anchor: /a+b/
// Regular expression literals are out.
const pattern = /a+b/g;
console.log(pattern);
