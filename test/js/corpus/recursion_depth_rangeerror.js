// Unbounded recursion throws RangeError: Maximum call stack size exceeded.
function down(n) {
  return down(n + 1) + 1;
}
try {
  down(0);
} catch (e) {
  console.log(e.name + ": " + e.message);
  console.log(e instanceof RangeError);
}
console.log("still running");
