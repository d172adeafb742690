// expect: 5:1 with
// anchor: with
// `with` is out (and is a syntax error in strict code anyway).
const o = { a: 1 };
with (o) {
  console.log(a);
}
