// Relational operators convert objects and strings.
console.log([2] > 1, [1, 2] > 1, "b" > "a", "2" > 1, "a" > 1, null > -1);
console.log([10] < [9], [10] < 9);
