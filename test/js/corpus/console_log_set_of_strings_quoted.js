// Strings in Sets and Map keys are quoted.
console.log(new Set(["a b", "it's", ""]));
console.log(new Map([["k", "v"], ["", ""]]));
