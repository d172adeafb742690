"use strict";
// Getters and setters in object literals, property descriptors, and Object.create.
const temperature = {
  celsius: 20,
  get fahrenheit() {
    return this.celsius * 1.8 + 32;
  },
  set fahrenheit(f) {
    this.celsius = (f - 32) / 1.8;
  },
};
console.log(temperature.fahrenheit, temperature);
temperature.fahrenheit = 212;
console.log(temperature.celsius, Object.keys(temperature));
const d = Object.getOwnPropertyDescriptor(temperature, "fahrenheit");
console.log(typeof d.get, typeof d.set, d.enumerable, d.configurable);
const o = {};
Object.defineProperty(o, "id", { value: 7, enumerable: true });
Object.defineProperty(o, "secret", { value: "s" });
Object.defineProperty(o, "computed", { get: () => o.id * 2, enumerable: true });
console.log(o, o.secret, Object.keys(o), JSON.stringify(o));
console.log(Object.getOwnPropertyDescriptor(o, "id"), Object.getOwnPropertyDescriptor(o, "nope"));
try {
  o.id = 8;
} catch (e) {
  console.log(e.message);
}
try {
  Object.defineProperty(o, "id", { value: 9 });
} catch (e) {
  console.log(e.message);
}
const base = { greet() { return "hello from " + this.name; } };
const child = Object.create(base, { name: { value: "child", enumerable: true } });
console.log(child.greet(), child, Object.getPrototypeOf(child) === base, base.isPrototypeOf(child));
const bare = Object.create(null);
bare.k = 1;
console.log(bare, "k" in bare, Object.getPrototypeOf(bare));
const sealed = Object.seal({ a: 1 });
sealed.a = 2;
console.log(Object.isSealed(sealed), Object.isExtensible(sealed), sealed.a);
try {
  sealed.b = 1;
} catch (e) {
  console.log(e.message);
}
const fixed = Object.preventExtensions({ a: 1 });
delete fixed.a;
console.log(Object.isExtensible(fixed), fixed);
console.log(Object.getOwnPropertyDescriptors({ x: 1, get y() { return 2; } }));
console.log(Object.getOwnPropertyNames([1, 2]), Object.getOwnPropertyNames("ab"));
console.log({ a: 1 }.propertyIsEnumerable("a"), [1].propertyIsEnumerable("length"));
