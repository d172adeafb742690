"use strict";
// this in functions and methods, call, apply and bind, and new on functions.
function who() {
  return this;
}
const obj = { who, name: "obj" };
console.log(who(), obj.who() === obj, who.call(5), who.apply("s", []));
function sum(a, b, c) {
  return [this, a + b + c];
}
console.log(sum.call(null, 1, 2, 3), sum.apply(undefined, [4, 5, 6]));
const bound = sum.bind("t", 1);
console.log(bound(2, 3), bound.name, bound.length, typeof bound);
function Person(name) {
  this.name = name;
}
Person.prototype.hello = function () {
  return "hi " + this.name;
};
const ann = new Person("ann");
console.log(ann, ann.hello(), ann instanceof Person, ann.constructor === Person);
console.log(Object.keys(Person.prototype), typeof Person.prototype);
function Factory() {
  return { made: true };
}
console.log(new Factory(), new Factory() instanceof Factory);
const arrow = () => 1;
try {
  new arrow();
} catch (e) {
  console.log(e.message);
}
const counter = {
  n: 0,
  tick() {
    [1, 2, 3].forEach(() => this.n++);
    return this.n;
  },
};
console.log(counter.tick());
console.log(Array.prototype.map.call([1, 2], (n) => n * 2), Object.prototype.toString.call([]));
console.log([3, 1, 2].sort.call([9, 8], (a, b) => a - b), Math.max.apply(null, [1, 5, 3]));
function Outer() {
  this.value = 42;
  const inner = () => this.value;
  return { inner };
}
console.log(new Outer().inner());
function Target() {
  return new.target === Target;
}
console.log(new Target() instanceof Target, Target());
