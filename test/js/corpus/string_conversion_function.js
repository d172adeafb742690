// String(x) for every kind of value.
console.log(String(1), String(-0), String(1.5e-7), String(1e21));
console.log(String(null), String(undefined));
console.log(String(true), String(false));
console.log(String([1, [2, [3]]]));
console.log(String([]));
console.log(JSON.stringify(String([null, undefined])));
console.log(String({}));
console.log(String({ a: 1 }));
console.log(String("s"));
console.log(String());
console.log(String(new Map()), String(new Set([1])));
console.log(String(NaN), String(-Infinity));
