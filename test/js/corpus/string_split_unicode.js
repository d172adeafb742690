// split("") splits code units, so a pair becomes two lone halves.
const parts = "a😀é".split("");
console.log(parts.length);
console.log(JSON.stringify(parts));
console.log("日本語".split(""));
console.log("x😀y😀z".split("😀"));
