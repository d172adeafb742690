// Functions return undefined without a return value.
function none() {}
function bare() {
  return;
}
function value() {
  return 7;
}
console.log(none(), bare(), value());
function early(x) {
  if (x) return "early";
  return "late";
}
console.log(early(1), early(0));
