// Control characters in strings through console.log and JSON.
const s = "a\u0000b\u0001c\u001fd\u007fe";
console.log(s.length);
console.log(JSON.stringify(s));
console.log([s]);
console.log(s.charCodeAt(1), s.charCodeAt(7));
