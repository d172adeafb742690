// expect: 5:3 private generator methods
// anchor: *#
// Generators are in, but not as private methods.
class Counter {
  *#count() {
    yield 1;
  }
}
console.log(Counter);
