// expect: 7:11 new
// anchor: new
// `new` is only for the builtins (Map, Set and the Error types), not user functions.
function Point(x) {
  return { x };
}
const p = new Point(1);
console.log(p);
