// test262's harness/assert.js in the language sluice runs (test/js/test262_runtime.py): the
// same names and behaviour, with let and const for var.
function isNegativeZero(value) {
  return value === 0 && 1 / value === -Infinity;
}

function isPrimitive(value) {
  return !value || (typeof value !== 'object' && typeof value !== 'function');
}

function formatIdentityFreeValue(value) {
  switch (value === null ? 'null' : typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'bigint':
      return String(value) + "n";
    case 'number':
      if (isNegativeZero(value)) return '-0';
    // falls through
    case 'boolean':
    case 'undefined':
    case 'null':
      return String(value);
  }
}

function formatSimpleValue(value) {
  const basic = formatIdentityFreeValue(value);
  if (basic) return basic;
  try {
    return String(value);
  } catch (err) {
    if (err.name === 'TypeError') return '[object]';
    throw err;
  }
}

function assert(mustBeTrue, message) {
  if (mustBeTrue === true) return;
  if (message === undefined) message = 'Expected true but got ' + assert._toString(mustBeTrue);
  throw Test262Error(message);
}

assert._isSameValue = (a, b) => {
  if (a === b) return a !== 0 || 1 / a === 1 / b;
  return a !== a && b !== b;
};

assert.sameValue = (actual, expected, message) => {
  try {
    if (assert._isSameValue(actual, expected)) return;
  } catch (error) {
    throw Test262Error(message + ' (_isSameValue operation threw) ' + error);
  }
  message = message === undefined ? '' : message + ' ';
  message += 'Expected SameValue(«' + assert._toString(actual) + '», «' + assert._toString(expected) + '») to be true';
  throw Test262Error(message);
};

assert.notSameValue = (actual, unexpected, message) => {
  if (!assert._isSameValue(actual, unexpected)) return;
  message = message === undefined ? '' : message + ' ';
  message += 'Expected SameValue(«' + assert._toString(actual) + '», «' + assert._toString(unexpected) + '») to be false';
  throw Test262Error(message);
};

assert.throws = (expectedErrorConstructor, func, message) => {
  if (typeof func !== "function") {
    throw Test262Error('assert.throws requires two arguments: the error constructor and a function to run');
  }
  message = message === undefined ? '' : message + ' ';
  try {
    func();
  } catch (thrown) {
    if (typeof thrown !== 'object' || thrown === null) {
      throw Test262Error(message + 'Thrown value was not an object!');
    } else if (thrown.constructor !== expectedErrorConstructor) {
      const expectedName = expectedErrorConstructor.name;
      const actualName = thrown.constructor.name;
      if (expectedName === actualName) {
        message += 'Expected a ' + expectedName + ' but got a different error constructor with the same name';
      } else {
        message += 'Expected a ' + expectedName + ' but got a ' + actualName;
      }
      throw Test262Error(message);
    }
    return;
  }
  throw Test262Error(message + 'Expected a ' + expectedErrorConstructor.name + ' to be thrown but no exception was thrown at all');
};

assert.compareArray = (actual, expected, message) => {
  message = message === undefined ? '' : message;
  if (typeof message === 'symbol') message = message.toString();
  if (isPrimitive(actual)) {
    assert(false, "Actual argument [" + actual + "] shouldn't be primitive. " + String(message));
  } else if (isPrimitive(expected)) {
    assert(false, "Expected argument [" + expected + "] shouldn't be primitive. " + String(message));
  }
  if (compareArray(actual, expected)) return;
  const format = compareArray.format;
  assert(false, "Actual " + format(actual) + " and expected " + format(expected) + " should have the same contents. " + String(message));
};

function compareArray(a, b) {
  if (b.length !== a.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (!assert._isSameValue(b[i], a[i])) return false;
  }
  return true;
}

compareArray.format = (arrayLike) => {
  const parts = [];
  for (let i = 0; i < arrayLike.length; i++) parts.push(String(arrayLike[i]));
  return "[" + parts.join(", ") + "]";
};

assert._formatIdentityFreeValue = formatIdentityFreeValue;
assert._toString = formatSimpleValue;
