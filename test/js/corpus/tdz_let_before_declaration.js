// Reading a let binding before its declaration throws ReferenceError.
try {
  console.log(a);
} catch (e) {
  console.log(e.name + ": " + e.message);
}
let a = 1;
console.log(a);
