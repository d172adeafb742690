// The names scripts give errors, as toString shows them.
const cases = [
  ["Error", "NotFoundError"],
  ["TypeError", "ValidationError"],
  ["TypeError", "Error"],
  ["RangeError", "Custom"],
  ["Error", ""],
];
for (const [kind, name] of cases) {
  const e = kind === "Error" ? new Error("m") : kind === "TypeError" ? new TypeError("m") : new RangeError("m");
  e.name = name;
  console.log(kind, JSON.stringify(name), String(e), e instanceof Error);
}
