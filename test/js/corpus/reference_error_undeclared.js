// Reading an undeclared name throws ReferenceError.
try {
  console.log(undeclaredThing);
} catch (e) {
  console.log(e.name + ": " + e.message);
}
try {
  undeclaredFn();
} catch (e) {
  console.log(e.name + ": " + e.message);
}
