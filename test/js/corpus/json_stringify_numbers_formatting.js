// Numbers in JSON use the same shortest form as String(n).
console.log(JSON.stringify([0.1 + 0.2, 1 / 3, 1e21, 1e-7, 123e-20, 5e-324, 2e308, -1e-7]));
console.log(JSON.stringify({ big: 9007199254740993, neg: -0.000001 }));
