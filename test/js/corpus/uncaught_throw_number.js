// A thrown number that is not caught.
console.log("about to throw");
throw 42;
