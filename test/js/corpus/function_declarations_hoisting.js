// Function declarations are hoisted to the top of their scope.
console.log(early());
function early() {
  return "hoisted";
}
{
  console.log(inner());
  function inner() {
    return "block function";
  }
}
