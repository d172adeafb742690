// An uncaught ReferenceError from an undeclared name.
console.log("ok so far");
console.log(missingName);
