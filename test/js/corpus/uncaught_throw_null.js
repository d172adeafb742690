// A thrown null.
console.log("null next");
throw null;
