// expect: 5:10 this
// anchor: this
// `this` inside a function is out.
function f() {
  return this;
}
console.log(f());
