// for...of over a string yields code points, not code units.
const out = [];
for (const ch of "a😀é日") {
  out.push(ch.length);
}
console.log(out);
console.log([..."a😀b"]);
console.log(Array.from("x😀").length);
console.log([..."\ud83dx"].length);
