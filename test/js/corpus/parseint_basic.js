// Number.parseInt on ordinary decimal strings.
console.log(Number.parseInt("42"));
console.log(Number.parseInt("  42  "));
console.log(Number.parseInt("-42"));
console.log(Number.parseInt("+42"));
console.log(Number.parseInt("42px"));
console.log(Number.parseInt("3.99"));
console.log(Number.parseInt("-3.99"));
console.log(Number.parseInt("007"));
console.log(Number.parseInt(""));
console.log(Number.parseInt("   "));
console.log(Number.parseInt("abc"));
console.log(Number.parseInt("-"));
console.log(Number.parseInt("\n\t 12"));
