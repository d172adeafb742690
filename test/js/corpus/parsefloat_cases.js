// Number.parseFloat parses the longest valid prefix.
console.log(Number.parseFloat("3.14"));
console.log(Number.parseFloat("  3.14abc"));
console.log(Number.parseFloat(".5"));
console.log(Number.parseFloat("-.5e-3"));
console.log(Number.parseFloat("1e3"));
console.log(Number.parseFloat("1e"));
console.log(Number.parseFloat("1.2.3"));
console.log(Number.parseFloat("Infinity"));
console.log(Number.parseFloat("-Infinityx"));
console.log(Number.parseFloat("0x10"));
console.log(Number.parseFloat(""));
console.log(Number.parseFloat("e5"));
console.log(Number.parseFloat("-0"));
console.log(Number.parseFloat("1e400"));
console.log(Number.parseFloat("1e-400"));
console.log(Number.parseFloat("0.1e1"));
