// expect: 4:21 class
// anchor: class
// Class expressions are out too.
const Shape = () => class {};
console.log(Shape);
