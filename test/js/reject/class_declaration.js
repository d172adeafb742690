// expect: 5:1 class
// anchor: class
// Classes are out.
console.log("before");
class Point {
  constructor(x) {
    this.x = x;
  }
}
