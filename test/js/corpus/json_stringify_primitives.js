// JSON.stringify of primitives.
console.log(JSON.stringify(1), JSON.stringify(-1.5), JSON.stringify(1e21), JSON.stringify(1e-7));
console.log(JSON.stringify("s"), JSON.stringify(""), JSON.stringify(true), JSON.stringify(null));
console.log(JSON.stringify(undefined));
console.log(JSON.stringify(NaN), JSON.stringify(Infinity), JSON.stringify(-Infinity));
console.log(JSON.stringify(-0));
console.log(typeof JSON.stringify(undefined));
console.log(JSON.stringify(() => 1));
