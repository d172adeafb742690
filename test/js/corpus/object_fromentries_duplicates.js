// Later duplicate keys overwrite earlier ones but keep the first position.
console.log(Object.fromEntries([["a", 1], ["b", 2], ["a", 3]]));
console.log({ a: 1, b: 2, a: 3 });
