// Array.from with a mapping function.
console.log(Array.from([1, 2, 3], (x) => x * 10));
console.log(Array.from("abc", (c, i) => c + i));
console.log(Array.from(new Set(["a", "b"]), (s) => s.toUpperCase()));
