// Shorthand properties take the binding's name.
const id = 7;
const name = "seven";
const tags = ["x"];
const rec = { id, name, tags };
console.log(rec);
const make = (host, port = 80) => ({ host, port });
console.log(make("a"), make("b", 8080));
