// Seven short strings in an array.
console.log(["a", "b", "c", "d", "e", "f", "g"]);
console.log(["apple", "banana", "cherry", "date", "elderberry", "fig", "grape"]);
