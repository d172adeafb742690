// test262's harness/compareArray.js is empty now: compareArray is in assert.js.
