// Maps and Sets have no own enumerable properties, so they stringify as {}.
console.log(JSON.stringify(new Map([["a", 1]])));
console.log(JSON.stringify(new Set([1, 2])));
console.log(JSON.stringify({ m: new Map(), s: new Set() }));
console.log(JSON.stringify(Object.fromEntries(new Map([["a", 1]]))));
console.log(JSON.stringify([...new Set([1, 2])]));
