// An uncaught ReferenceError from the TDZ.
console.log(early);
let early = 1;
