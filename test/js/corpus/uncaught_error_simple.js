// An uncaught Error ends the run with exit code 1.
console.log("before");
throw new Error("something failed");
