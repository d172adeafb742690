// Spread copies shallowly.
const orig = { list: [1], n: 1 };
const copy = { ...orig };
copy.list.push(2);
copy.n = 2;
console.log(orig, copy);
const arr = [[1], [2]];
const arrCopy = [...arr];
arrCopy[0].push(9);
console.log(arr);
