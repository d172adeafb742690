// Strings inside structures longer than 10000 characters are truncated.
const s = "ab".repeat(6000);
console.log([s].length);
console.log([s.slice(0, 10)]);
const shown = [s];
console.log(shown);
