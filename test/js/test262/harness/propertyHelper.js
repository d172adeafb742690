// test262's harness/propertyHelper.js in the language sluice runs (test/js/test262_runtime.py):
// the same names and behaviour, with let and const for var, rest parameters for
// `arguments`, and Object.hasOwn for the bound Object.prototype.hasOwnProperty.
const __getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
const __hasOwnProperty = (o, name) => Object.hasOwn(o, name);
const nonIndexNumericPropertyName = Math.pow(2, 32) - 1;

function verifyProperty(obj, name, desc, ...more) {
  assert(desc !== undefined || more.length >= 0, 'verifyProperty should receive at least 3 arguments: obj, name, and descriptor');
  const options = more[0];
  const label = options && options.label || String(name);
  const originalDesc = __getOwnPropertyDescriptor(obj, name);
  if (desc === undefined) {
    assert.sameValue(originalDesc, undefined, label + " descriptor should be undefined");
    return true;
  }
  assert(__hasOwnProperty(obj, name), label + " should be an own property");
  assert.notSameValue(desc, null, "The desc argument should be an object or undefined, null");
  assert.sameValue(typeof desc, "object", "The desc argument should be an object or undefined, " + String(desc));
  const names = Object.getOwnPropertyNames(desc);
  for (let i = 0; i < names.length; i++) {
    assert(names[i] === "value" || names[i] === "writable" || names[i] === "enumerable" ||
      names[i] === "configurable" || names[i] === "get" || names[i] === "set",
      "Invalid descriptor field: " + names[i]);
  }
  const failures = [];
  if (__hasOwnProperty(desc, 'value')) {
    if (!isSameValue(desc.value, originalDesc.value)) failures.push(label + " descriptor value should be " + String(desc.value));
    if (!isSameValue(desc.value, obj[name])) failures.push(label + " value should be " + String(desc.value));
  }
  if (__hasOwnProperty(desc, 'enumerable') && desc.enumerable !== undefined) {
    if (desc.enumerable !== originalDesc.enumerable || desc.enumerable !== isEnumerable(obj, name)) {
      failures.push(label + " descriptor should " + (desc.enumerable ? '' : 'not ') + "be enumerable");
    }
  }
  if (__hasOwnProperty(desc, 'writable') && desc.writable !== undefined) {
    if (desc.writable !== originalDesc.writable || desc.writable !== isWritable(obj, name)) {
      failures.push(label + " descriptor should " + (desc.writable ? '' : 'not ') + "be writable");
    }
  }
  if (__hasOwnProperty(desc, 'configurable') && desc.configurable !== undefined) {
    if (desc.configurable !== originalDesc.configurable || desc.configurable !== isConfigurable(obj, name)) {
      failures.push(label + " descriptor should " + (desc.configurable ? '' : 'not ') + "be configurable");
    }
  }
  if (failures.length) assert(false, failures.join('; '));
  if (options && options.restore) Object.defineProperty(obj, name, originalDesc);
  return true;
}

function isConfigurable(obj, name) {
  try {
    delete obj[name];
  } catch (e) {
    if (!(e instanceof TypeError)) throw Test262Error("Expected TypeError, got " + e);
  }
  return !__hasOwnProperty(obj, name);
}

function isEnumerable(obj, name) {
  let stringCheck = false;
  if (typeof name === "string") {
    for (const x in obj) {
      if (x === name) {
        stringCheck = true;
        break;
      }
    }
  } else {
    stringCheck = true;
  }
  const desc = __getOwnPropertyDescriptor(obj, name);
  return stringCheck && desc !== undefined && desc.enumerable;
}

function isSameValue(a, b) {
  if (a === 0 && b === 0) return 1 / a === 1 / b;
  if (a !== a && b !== b) return true;
  return a === b;
}

function isWritable(obj, name, verifyProp, ...value) {
  const unlikelyValue = Array.isArray(obj) && name === "length" ? nonIndexNumericPropertyName : "unlikelyValue";
  let newValue = value[0] || unlikelyValue;
  const hadValue = __hasOwnProperty(obj, name);
  const oldValue = obj[name];
  if (value.length === 0 && newValue === oldValue) newValue = newValue + "2";
  try {
    obj[name] = newValue;
  } catch (e) {
    if (!(e instanceof TypeError)) throw Test262Error("Expected TypeError, got " + e);
  }
  const writeSucceeded = isSameValue(obj[verifyProp || name], newValue);
  if (writeSucceeded) {
    if (hadValue) obj[name] = oldValue;
    else delete obj[name];
  }
  return writeSucceeded;
}

function verifyCallableProperty(obj, name, functionName, functionLength, desc, options) {
  const label = options && options.label || String(name);
  const propertyVerifier = options && options.verifyProperty || verifyProperty;
  const value = obj && obj[name];
  assert.sameValue(typeof value, "function", label + " should be a function");
  if (desc === undefined) {
    desc = { writable: true, enumerable: false, configurable: true, value: value };
  } else if (!__hasOwnProperty(desc, "value") && !__hasOwnProperty(desc, "get")) {
    desc.value = value;
  }
  propertyVerifier(obj, name, desc, options);
  if (functionName === undefined) {
    functionName = typeof name === "symbol" ? "[" + name.description + "]" : name;
  }
  propertyVerifier(value, "name", { value: functionName, writable: false, enumerable: false, configurable: desc.configurable },
    { label: label + " name", restore: options && options.restore });
  propertyVerifier(value, "length", { value: functionLength, writable: false, enumerable: false, configurable: desc.configurable },
    { label: label + " length", restore: options && options.restore });
}

function verifyAccessorProperty(obj, name, desc, options) {
  const checkGet = __hasOwnProperty(desc, "get");
  const checkSet = __hasOwnProperty(desc, "set");
  assert(checkGet || checkSet, 'verifyAccessorProperty requires at least one of "get" and "set"');
  const label = options && options.label || String(name);
  const propertyVerifier = options && options.verifyProperty || verifyProperty;
  const callabilityVerifier = options && options.verifyCallableProperty || verifyCallableProperty;
  const originalDesc = __getOwnPropertyDescriptor(obj, name);
  const keyName = typeof name === "symbol" ? "[" + name.description + "]" : name;
  if (checkGet) {
    const expectGetter = desc.get;
    if (expectGetter === undefined || typeof expectGetter === "function") {
      assert.sameValue(originalDesc.get, expectGetter, label + " getter");
    } else {
      const getterName = expectGetter.name === undefined ? "get " + keyName : expectGetter.name;
      const getterLength = expectGetter.length !== undefined ? expectGetter.length : 0;
      callabilityVerifier(originalDesc, "get", getterName, getterLength, {}, { label: label + " getter" });
    }
  }
  if (checkSet) {
    const expectSetter = desc.set;
    if (expectSetter === undefined || typeof expectSetter === "function") {
      assert.sameValue(originalDesc.set, expectSetter, label + " setter");
    } else {
      const setterName = expectSetter.name === undefined ? "set " + keyName : expectSetter.name;
      const setterLength = expectSetter.length !== undefined ? expectSetter.length : 1;
      callabilityVerifier(originalDesc, "set", setterName, setterLength, {}, { label: label + " setter" });
    }
  }
  const resolvedDesc = { get: originalDesc.get, set: originalDesc.set };
  if (!__hasOwnProperty(desc, "enumerable")) resolvedDesc.enumerable = false;
  else if (desc.enumerable !== undefined) resolvedDesc.enumerable = desc.enumerable;
  if (!__hasOwnProperty(desc, "configurable")) resolvedDesc.configurable = true;
  else if (desc.configurable !== undefined) resolvedDesc.configurable = desc.configurable;
  propertyVerifier(obj, name, resolvedDesc, options);
}

function verifyEqualTo(obj, name, value) {
  if (!isSameValue(obj[name], value)) {
    throw Test262Error("Expected obj[" + String(name) + "] to equal " + value + ", actually " + obj[name]);
  }
}

function verifyWritable(obj, name, verifyProp, ...value) {
  if (!verifyProp) assert(__getOwnPropertyDescriptor(obj, name).writable, "Expected obj[" + String(name) + "] to have writable:true.");
  if (!isWritable(obj, name, verifyProp, ...value)) throw Test262Error("Expected obj[" + String(name) + "] to be writable, but was not.");
}

function verifyNotWritable(obj, name, verifyProp) {
  if (!verifyProp) assert(!__getOwnPropertyDescriptor(obj, name).writable, "Expected obj[" + String(name) + "] to have writable:false.");
  if (isWritable(obj, name, verifyProp)) throw Test262Error("Expected obj[" + String(name) + "] NOT to be writable, but was.");
}

function verifyEnumerable(obj, name) {
  assert(__getOwnPropertyDescriptor(obj, name).enumerable, "Expected obj[" + String(name) + "] to have enumerable:true.");
  if (!isEnumerable(obj, name)) throw Test262Error("Expected obj[" + String(name) + "] to be enumerable, but was not.");
}

function verifyNotEnumerable(obj, name) {
  assert(!__getOwnPropertyDescriptor(obj, name).enumerable, "Expected obj[" + String(name) + "] to have enumerable:false.");
  if (isEnumerable(obj, name)) throw Test262Error("Expected obj[" + String(name) + "] NOT to be enumerable, but was.");
}

function verifyConfigurable(obj, name) {
  assert(__getOwnPropertyDescriptor(obj, name).configurable, "Expected obj[" + String(name) + "] to have configurable:true.");
  if (!isConfigurable(obj, name)) throw Test262Error("Expected obj[" + String(name) + "] to be configurable, but was not.");
}

function verifyNotConfigurable(obj, name) {
  assert(!__getOwnPropertyDescriptor(obj, name).configurable, "Expected obj[" + String(name) + "] to have configurable:false.");
  if (isConfigurable(obj, name)) throw Test262Error("Expected obj[" + String(name) + "] NOT to be configurable, but was.");
}

const verifyPrimordialProperty = verifyProperty;
const verifyPrimordialCallableProperty = verifyCallableProperty;
const verifyPrimordialAccessorProperty = verifyAccessorProperty;
