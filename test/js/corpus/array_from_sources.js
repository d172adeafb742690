// Array.from of arrays, strings, Maps and Sets.
console.log(Array.from([1, 2, 3]));
console.log(Array.from("héllo"));
console.log(Array.from("😀a"));
console.log(Array.from(new Set([3, 1, 3, 2])));
console.log(Array.from(new Map([["a", 1], ["b", 2]])));
const src = [1, 2];
const copy = Array.from(src);
copy.push(3);
console.log(src, copy);
console.log(Array.from(new Map([["k", 1]]).keys()));
