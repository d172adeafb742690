// Which methods change the array and which return new arrays.
const a = [3, 1, 2];
const mapped = a.map((x) => x);
const sliced = a.slice();
const concatenated = a.concat();
a.sort();
console.log(a, mapped, sliced, concatenated);
a.reverse();
console.log(a);
a.splice(0, 1);
console.log(a, mapped);
