// Filtering falsy values with Boolean.
console.log([0, 1, "", "a", null, undefined, NaN, false, true, [], {}].filter(Boolean));
console.log([0, -0].filter(Boolean).length);
