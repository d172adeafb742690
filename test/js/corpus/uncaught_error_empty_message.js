// An uncaught Error with an empty message prints just its name.
console.log("x");
throw new TypeError("");
