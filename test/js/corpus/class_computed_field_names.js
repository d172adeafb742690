"use strict";
// Computed class field names: each key evaluated once, when the class is, in order with the
// computed method names; symbols, numbers, ToPropertyKey's calls, static fields, naming.
const log = [];
const key = (name) => { log.push(name); return name; };
const sym = Symbol("s");
class A {
  [key("a")] = 1;
  [key("m")]() { return "method"; }
  static [key("s")] = 2;
  [sym] = "symbol";
  [1 + 1] = "two";
  [key("f")] = () => "arrow";
  [key("e")];
}
console.log(log);
const a1 = new A();
const a2 = new A();
console.log(a1, A.s, a1.m(), a1.f.name, a1.f(), "e" in a1, a1.e);
console.log(log.length, Object.keys(a2), a2[sym]);
const conversions = [];
const tricky = { toString() { conversions.push("toString"); return "t"; } };
class B { [tricky] = 3; static [tricky] = 4; }
console.log(conversions, new B().t, new B().t, B.t, conversions);
let i = 0;
class C { [`k${i++}`] = i; [`k${i++}`] = i; }
console.log(new C(), i);
try {
  class D { [(() => { throw new Error("key threw"); })()] = 1; }
  console.log(D);
} catch (e) {
  console.log(e.message);
}
class E extends A { ["sub"] = "x"; }
console.log(new E());
function make(k) { return class { [k] = k; }; }
const K1 = make("p"), K2 = make("q");
console.log(new K1(), new K2());
class F { ["constructor"] = "field"; }
console.log(Object.keys(new F()), new F().constructor);
