// test262's harness/sta.js in the language sluice runs (test/js/test262_runtime.py): the
// same names and behaviour. Test262Error returns its object, so that it works called or
// constructed; its `constructor` is Test262Error, which is what assert.throws compares.
function Test262Error(message) {
  const text = message || "";
  return { message: text, constructor: Test262Error, toString: () => "Test262Error: " + text };
}

Test262Error.thrower = (message) => {
  throw Test262Error(message);
};

function $DONOTEVALUATE() {
  throw "Test262: This statement should not be evaluated.";
}
