// Empty and non-empty strings in boolean contexts.
console.log(typeof "", typeof "x");
console.log(Boolean(""), Boolean(" "), Boolean("0"), Boolean("false"));
console.log(!"", !!"a");
console.log("" || "default", "x" || "default");
console.log("" ?? "nullish", null ?? "nullish");
