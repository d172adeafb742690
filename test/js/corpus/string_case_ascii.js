// toUpperCase and toLowerCase on ASCII.
console.log("Hello, World! 123".toUpperCase());
console.log("Hello, World! 123".toLowerCase());
console.log("".toUpperCase() === "");
console.log("MiXeD".toLowerCase(), "MiXeD".toUpperCase());
