// The Error constructors and their name and message.
const errs = [new Error("a"), new TypeError("b"), new RangeError("c"), new SyntaxError("d"), new Error()];
for (const e of errs) {
  console.log(e.name, JSON.stringify(e.message), e instanceof Error);
}
console.log(new Error(42).message, typeof new Error(42).message);
console.log(new Error(undefined).message === "");
