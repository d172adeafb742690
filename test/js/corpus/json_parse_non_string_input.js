// JSON.parse converts its argument to a string first.
console.log(JSON.parse(1));
console.log(JSON.parse(true));
console.log(JSON.parse(null));
console.log(JSON.parse([1]));
try {
  JSON.parse(undefined);
} catch (e) {
  console.log(e.name + ": " + e.message);
}
try {
  JSON.parse({});
} catch (e) {
  console.log(e.name + ": " + e.message);
}
