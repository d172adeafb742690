// expect: 5:3 private
// anchor: #count
// Private class members are out for now.
class Counter {
  #count = 0;
}
console.log(new Counter());
