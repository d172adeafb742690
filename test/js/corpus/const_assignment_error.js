// Assigning to a const throws TypeError.
const c = 1;
try {
  c = 2;
} catch (e) {
  console.log(e.name + ": " + e.message);
}
const o = { a: 1 };
o.a = 2;
console.log(o);
try {
  c++;
} catch (e) {
  console.log(e.name + ": " + e.message);
}
try {
  c += 1;
} catch (e) {
  console.log(e.name + ": " + e.message);
}
console.log(c);
