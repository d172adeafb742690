// ToPrimitive tries toString and valueOf in the hint's order; when neither gives a primitive
// it is a TypeError.
const cases = [
  ["toString gives an object", () => String({ toString: () => ({}) })],
  ["then valueOf is used", () => String({ toString: () => ({}), valueOf: () => 5 })],
  ["toString is not a function", () => "" + { toString: 1 }],
  ["template, toString gives an array", () => `${{ toString: () => [] }}`],
  ["valueOf first for +", () => +{ valueOf: () => ({}), toString: () => "7" }],
  ["valueOf gives a string", () => +{ valueOf: () => "8" }],
  ["toString number", () => ({ toString: () => 5 }) + 1],
  ["valueOf for + with a string", () => ({ valueOf: () => 5 }) + "1"],
  ["compare by valueOf", () => ({ valueOf: () => 3 }) < ({ valueOf: () => 10 })],
  ["compare by toString", () => ({ toString: () => "3" }) < ({ toString: () => "10" })],
  ["loose equality", () => ({ valueOf: () => 3 }) == 3],
  ["as a key", () => Object.keys({ [{ toString: () => "key" }]: 1 })],
  ["iterators", () => [`${[1].values()}`, String(new Map().keys()), "" + new Set().entries()]],
];
for (const [name, f] of cases) {
  try {
    console.log(name, "->", f());
  } catch (e) {
    console.log(name, "->", e.name + ": " + e.message);
  }
}
