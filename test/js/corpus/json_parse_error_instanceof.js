// JSON.parse errors are SyntaxError instances and Errors.
try {
  JSON.parse("{bad");
} catch (e) {
  console.log(e instanceof SyntaxError, e instanceof Error, e instanceof TypeError);
  console.log(e.name);
}
