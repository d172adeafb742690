// Replacer array entries that are numbers become key strings.
console.log(JSON.stringify({ 1: "a", 2: "b", x: "c" }, [2, 1]));
console.log(JSON.stringify({ 1: "a", 2: "b" }, ["1", 1]));
