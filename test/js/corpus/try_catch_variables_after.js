// Bindings assigned in try are visible after it.
let value;
try {
  value = JSON.parse('{"n": 3}').n;
} catch (e) {
  value = -1;
}
console.log(value);
let value2 = "unset";
try {
  value2 = JSON.parse("nope");
} catch (e) {
  console.log("parse failed, kept", value2);
}
