// Grouped arrays of strings are padded at the end.
const words = [];
for (let i = 0; i < 30; i++) words.push("w".repeat(i % 5 + 1));
console.log(words);
const names = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota",
  "kappa", "lambda", "mu"];
console.log(names);
