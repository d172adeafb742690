// A function that reads a let is fine once the let is initialised.
const read = () => value;
try {
  read();
} catch (e) {
  console.log(e.name + ": " + e.message);
}
let value = 42;
console.log(read());
