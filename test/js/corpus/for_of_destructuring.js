// Destructuring in for...of heads.
const pts = [{ x: 1, y: 2 }, { x: 3, y: 4 }];
for (const { x, y } of pts) console.log(x + y);
for (const [a, b = "default"] of [[1], [2, 3]]) console.log(a, b);
for (const [i, { x }] of pts.entries()) console.log(i, x);
