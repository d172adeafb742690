// splice removes and inserts in place and returns the removed elements.
const a = [0, 1, 2, 3, 4, 5];
console.log(a.splice(1, 2));
console.log(a);
console.log(a.splice(1, 0, "x", "y"));
console.log(a);
console.log(a.splice(-2));
console.log(a);
console.log(a.splice(1, 1, "z"));
console.log(a);
console.log(a.splice(0));
console.log(a);
