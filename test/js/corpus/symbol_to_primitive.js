"use strict";
// Symbol.toPrimitive is called by ToPrimitive with the hint each operation gives (+, ==,
// relational comparison, templates, String, Number, property keys, arithmetic, Date), before
// valueOf/toString; what it returns must be a primitive; OrdinaryToPrimitive's order
// otherwise; Object.prototype.toString and String(x) read Symbol.toStringTag.
const seen = [];
const o = {
  [Symbol.toPrimitive](hint) {
    seen.push(hint);
    return hint === "number" ? 42 : `str:${hint}`;
  },
  valueOf() { seen.push("valueOf"); return 1; },
  toString() { seen.push("toString"); return "ts"; },
};
console.log(+o, `${o}`, o + "", o == "str:default", o < 50, String(o), Number(o), o * 2, [o].join());
console.log({ [o]: 1 }, o in { "str:string": 1 }, Math.max(o, 1), isNaN(o), "x".repeat(o > 41 ? 2 : 0));
console.log(seen.join(" "));
// Evaluation order: both operands are converted, left then right.
const order = [];
const tagged = (name, value) => ({ [Symbol.toPrimitive](hint) { order.push(`${name}:${hint}`); return value; } });
console.log(tagged("a", 1) + tagged("b", 2), tagged("c", 3) < tagged("d", 4), tagged("e", "x") == tagged("f", "x"));
console.log(tagged("g", 5) - tagged("h", 1), tagged("i", 2) * tagged("j", 3), `${tagged("k", "t")}${tagged("l", "u")}`);
console.log(order.join(" "));
// An inherited toPrimitive, a getter, and one on a class.
class Money {
  constructor(cents) { this.cents = cents; }
  [Symbol.toPrimitive](hint) { return hint === "string" ? `$${(this.cents / 100).toFixed(2)}` : this.cents / 100; }
}
const m = new Money(1250);
console.log(`${m}`, m + 1, m * 2, m > 12, String(m), [m, new Money(5)].join(" | "));
const viaProto = Object.create({ [Symbol.toPrimitive]() { return "inherited"; } });
console.log(`${viaProto}`, viaProto + "!");
let gets = 0;
const getter = { get [Symbol.toPrimitive]() { gets++; return () => 7; } };
console.log(getter + 1, +getter, gets);
// undefined or null means there is none: OrdinaryToPrimitive with valueOf first for numbers.
const calls = [];
const plain = (extra) => ({ ...extra, valueOf() { calls.push("valueOf"); return {}; }, toString() { calls.push("toString"); return "7"; } });
console.log(+plain({ [Symbol.toPrimitive]: undefined }), `${plain({ [Symbol.toPrimitive]: null })}`, plain({}) + 1);
console.log(calls.join(" "));
// Errors, as V8 words them.
for (const bad of [
  () => +{ [Symbol.toPrimitive]: 1 },
  () => `${{ [Symbol.toPrimitive]: "nope" }}`,
  () => +{ [Symbol.toPrimitive]() { return {}; } },
  () => `${{ [Symbol.toPrimitive]() { return [1]; } }}`,
  () => `${{ [Symbol.toPrimitive]() { return Symbol("s"); } }}`,
  () => +{ [Symbol.toPrimitive]() { return Symbol("s"); } },
  () => +{ [Symbol.toPrimitive]() { throw new RangeError("from the method"); } },
  () => +{ valueOf() { return {}; }, toString() { return {}; } },
]) {
  try {
    console.log("no error", bad());
  } catch (e) {
    console.log(e.constructor.name, e.message);
  }
}
// Date keeps its own: a string by default, a number for "number".
const d = new Date(0);
console.log(typeof (d + 1), d - 1, d[Symbol.toPrimitive]("number"), d[Symbol.toPrimitive]("default") === d.toString());
// Symbol.toStringTag.
class Tee { get [Symbol.toStringTag]() { return "Tee"; } }
console.log(Object.prototype.toString.call(new Tee()), String(new Tee()), `${new Tee()}`, new Tee() + "");
console.log(Object.prototype.toString.call({ [Symbol.toStringTag]: 5 }), String({ [Symbol.toStringTag]: "Own" }));
console.log(Object.prototype.toString.call(Promise.resolve()), Object.prototype.toString.call(new Map()),
  Object.prototype.toString.call(Symbol()), Object.prototype.toString.call(JSON), Object.prototype.toString.call(Math),
  Object.prototype.toString.call((function* () {})()), Object.prototype.toString.call((async function* () {})()));
