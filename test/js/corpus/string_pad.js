// padStart and padEnd with default and custom fillers.
console.log("5".padStart(3, "0"));
console.log("abc".padStart(6));
console.log("abc".padEnd(6) + "|");
console.log("abc".padStart(10, "12345"));
console.log("abc".padEnd(8, "xy"));
console.log("abc".padStart(2));
console.log("abc".padStart(5, ""));
console.log("7".padStart(4, "😀"));
console.log("x".padEnd(3.9, "-"));
console.log("x".padStart(-1, "-"));
