// typeof of a binding in its TDZ still throws.
try {
  console.log(typeof later);
} catch (e) {
  console.log(e.name + ": " + e.message);
}
let later = "now";
console.log(typeof later);
