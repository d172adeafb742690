// expect: 6:32 'arguments' is not allowed in class field initializer or static
// anchor: arguments
// An arrow in a static block would see the block's arguments, and it has none.
function f() {
  class A {
    static { console.log(() => arguments); }
  }
}
f();
