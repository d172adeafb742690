// Lengths after building strings with non-ASCII content.
let s = "";
for (let i = 0; i < 5; i++) s += "é😀";
console.log(s.length);
console.log(s.slice(0, 3).length);
console.log(s.repeat(2).length);
console.log(s.split("😀").length);
console.log(s.toUpperCase().length);
