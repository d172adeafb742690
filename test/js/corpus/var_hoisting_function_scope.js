// var: declared for the whole function wherever its statement is, undefined until assigned.
console.log(typeof early, early);
var early = "set";
console.log(early);

function scopes(flag) {
  console.log("before", inner, typeof later);
  if (flag) {
    var inner = "in the if";
  }
  {
    {
      var later = 2;
    }
  }
  console.log("after", inner, later);
  return inner;
}
console.log(scopes(true), scopes(false));

function reads() {
  return helper();
  function helper() {
    return value;
  }
  var value = 3;
}
console.log(reads());

function again() {
  var n = 1;
  var n;
  console.log(n);
  var n = 2;
  return n;
}
console.log(again());

function param(p) {
  var p;
  console.log(p);
  var p = p + 1;
  return p;
}
console.log(param(41));

function extra(a) {
  var unset;
  var alsoUnset;
  const read = () => alsoUnset;
  return [a, unset, read()];
}
console.log(extra(1, "extra arguments", "do not leak into vars"));

function* generatorVar(a) {
  var before;
  yield before;
}
console.log([...generatorVar(1, 2, 3)]);

function withFunction() {
  var f = 1;
  function f() {}
  return typeof f;
}
function functionFirst() {
  const t = typeof f;
  var f = 1;
  function f() {}
  return t;
}
console.log(withFunction(), functionFirst());

var a = 1, b, [c, d = 4] = [3], { e, ...rest } = { e: 5, g: 6, h: 7 };
console.log(a, b, c, d, e, rest);

var named = function () {};
var arrow = () => 1;
console.log(named.name, arrow.name);

switch (2) {
  case 1:
    var fromCase = "one";
    break;
  case 2:
    fromCase = "assigned before its statement";
}
console.log(fromCase);

try {
  throw new Error("x");
} catch (err) {
  var err = "the var initialiser assigns the catch parameter";
  console.log(err);
}
console.log(err);

if (true) var single = "a var as a single statement";
console.log(single);
