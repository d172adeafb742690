// Changes to the loop variable inside the body are seen by that iteration's closure.
const fns = [];
for (let i = 0; i < 6; i++) {
  fns.push(() => i);
  i++;
}
console.log(fns.map((f) => f()));
const fns2 = [];
for (let i = 0; i < 3; i++) {
  fns2.push(() => i);
}
console.log(fns2[0](), fns2[2]());
