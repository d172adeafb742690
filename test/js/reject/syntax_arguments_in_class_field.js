// expect: 6:9 'arguments' is not allowed in class field initializer
// anchor: arguments
// A class field's initialiser has no arguments object of its own (ES 15.7.1).
function f() {
  class A {
    x = arguments;
  }
  return A;
}
console.log(f());
