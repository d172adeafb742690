// Sets print their values.
console.log(new Set([1, "two", null, undefined, [3], { four: 4 }]));
console.log(new Set(["a"]));
console.log({ s: new Set([1, 2]) });
console.log([new Set()]);
