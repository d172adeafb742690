// Several structures in one call.
console.log([1], { a: 1 }, new Set([2]), new Map([[3, 4]]), "end");
console.log("label:", { nested: { deep: { deeper: { deepest: 1 } } } });
