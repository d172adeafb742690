// expect: 3:13 arguments at the top level
// anchor: arguments
console.log(arguments.length);
