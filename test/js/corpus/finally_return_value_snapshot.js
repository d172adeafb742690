// The try's return value is computed before finally changes the variable.
function f() {
  let x = 1;
  try {
    return x;
  } finally {
    x = 2;
  }
}
console.log(f());
function g() {
  const o = { v: 1 };
  try {
    return o;
  } finally {
    o.v = 2;
  }
}
console.log(g());
