// Splitting and slicing through the middle of a surrogate pair.
const s = "😀😁";
console.log(s.length);
console.log(s.slice(0, 2) === "😀");
console.log(JSON.stringify(s.slice(1, 3)));
console.log(s.split("").length);
console.log(JSON.stringify(s.split("")));
console.log(s.substring(2));
console.log(JSON.stringify(s.slice(-1)));
