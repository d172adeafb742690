// new Map from entries that are not objects.
try {
  new Map([["ok", 1], 5]);
} catch (e) {
  console.log(e.name + ": " + e.message);
}
try {
  new Map(["ab"]);
  console.log("string entries are objects? no:");
} catch (e) {
  console.log(e.name + ": " + e.message);
}
console.log(new Map([[1]]).get(1));
