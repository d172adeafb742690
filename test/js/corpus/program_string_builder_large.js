// Building a large string and checking its pieces.
const parts = [];
for (let i = 0; i < 2000; i++) parts.push(String(i));
const s = parts.join(",");
console.log(s.length, s.slice(0, 20), s.slice(-20), s.split(",").length);
