// Arguments are joined with single spaces; strings are not quoted at top level.
console.log("a", "b", "c");
console.log("x", 1, "y", [1], { z: 1 });
console.log("", "");
console.log(1, "");
console.log(null, undefined, NaN, -0, 0);
