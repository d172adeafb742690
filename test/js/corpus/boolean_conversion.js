// Boolean(x) for every kind of value.
const vals = [0, -0, NaN, 1, -1, "", " ", "0", "false", null, undefined, [], {}, [0], Infinity];
console.log(vals.map((v) => Boolean(v)));
console.log(Boolean(), Boolean(new Map()), Boolean(() => 0));
