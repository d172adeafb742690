// Maps print their entries with =>.
console.log(new Map([["a", 1], ["b", { c: 2 }]]));
console.log(new Map([[1, "one"], [true, null], [null, undefined]]));
console.log(new Map([[{ k: 1 }, [1, 2]]]));
console.log([new Map([["x", 1]])]);
console.log({ m: new Map([["y", [new Map()]]]) });
