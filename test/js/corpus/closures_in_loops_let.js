// let in a for loop gives each iteration its own binding.
const fns = [];
for (let i = 0; i < 4; i++) {
  fns.push(() => i);
}
console.log(fns.map((f) => f()));
const fns2 = [];
for (const x of ["a", "b", "c"]) fns2.push(() => x);
console.log(fns2.map((f) => f()));
const fns3 = [];
for (const k in { p: 1, q: 2 }) fns3.push(() => k);
console.log(fns3.map((f) => f()));
