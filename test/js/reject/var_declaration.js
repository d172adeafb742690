// expect: 5:3 var
// anchor: var
// `var` is out: function-scoped declarations are replaced by let and const.
console.log("never printed: the file must not compile");
  var count = 1;
console.log(count);
