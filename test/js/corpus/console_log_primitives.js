// Top-level primitives print unquoted.
console.log("text");
console.log(1, "a", true, null, undefined);
console.log(false);
console.log("");
console.log();
console.log(" leading and trailing ");
console.log("multi\nline");
