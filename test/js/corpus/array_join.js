// join with separators; null and undefined become empty.
console.log([1, 2, 3].join());
console.log([1, 2, 3].join(""));
console.log([1, 2, 3].join(" - "));
console.log([null, undefined, 1].join(","));
console.log([[1, 2], [3]].join(";"));
console.log([].join(","));
console.log(JSON.stringify([""].join(",")));
console.log([true, {}, "s"].join("|"));
console.log([1.5, -0, 1e21].join());
