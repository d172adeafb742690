// expect: 5:1 generator
// anchor: function*
// Generators are out.
console.log("before");
function* count() {
  yield 1;
}
console.log(count);
