// Unary + converts strings to numbers with the StringToNumber grammar.
const inputs = ["12", " 12 ", "", "   ", "0x1F", "0b101", "0o17", "1e3", "-1e-3", ".5",
  "5.", "Infinity", "-Infinity", "infinity", "1,000", "12px", "\n42\t", "+7", "--7", "00012",
  "1_000", "0.0000001"];
for (const s of inputs) {
  console.log(JSON.stringify(s), +s);
}
