// Indexes computed at run time.
const a = ["a", "b", "c", "d"];
for (let i = a.length - 1; i >= 0; i -= 2) {
  console.log(i, a[i]);
}
const idx = "2";
console.log(a[idx]);
