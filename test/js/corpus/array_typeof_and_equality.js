// Arrays are objects compared by reference.
const a = [1];
const b = [1];
console.log(typeof a);
console.log(a === b, a == b, a === a);
console.log([] == "", [1] == 1, [1, 2] == "1,2");
console.log(a instanceof Array);
