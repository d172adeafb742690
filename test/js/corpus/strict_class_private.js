"use strict";
// Private fields, methods, accessors and static members, #x in o, and their brand checks.
class Counter {
  #count = 0;
  static #instances = 0;
  #secret() { return "s" + this.#count; }
  get #double() { return this.#count * 2; }
  set #double(v) { this.#count = v / 2; }
  constructor() { Counter.#instances++; }
  inc() { this.#count++; return this; }
  get value() { return this.#count; }
  peek() { return [this.#secret(), this.#double]; }
  setDouble(v) { this.#double = v; return this.#count; }
  static has(o) { return #count in o; }
  static get instances() { return Counter.#instances; }
  static read(o) { return o.#count; }
}
const c = new Counter().inc().inc();
console.log(c, c.value, c.peek(), c.setDouble(10), Counter.has(c), Counter.has({}), Counter.instances);
console.log(Object.keys(c), JSON.stringify(c), Object.getOwnPropertyNames(c));
try { Counter.read({}); } catch (e) { console.log(e.constructor.name, e.message); }
class Sub extends Counter { #count = "sub"; own() { return this.#count; } }
const s = new Sub();
console.log(s.own(), s.value, Counter.has(s));
try { c.peek.call({}); } catch (e) { console.log(e.constructor.name); }
const f = Object.freeze(new Counter());
console.log(f.inc().value);
