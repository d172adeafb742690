// test262's harness/doneprintHandle.js in the language sluice runs: $DONE prints the
// async test's outcome.
function $DONE(error) {
  if (error) {
    if (typeof error === 'object' && error !== null && 'name' in error) {
      console.log('Test262:AsyncTestFailure:' + error.name + ': ' + error.message);
    } else {
      console.log('Test262:AsyncTestFailure:Test262Error: ' + String(error));
    }
  } else {
    console.log('Test262:AsyncTestComplete');
  }
}
