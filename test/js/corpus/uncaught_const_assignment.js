// An uncaught TypeError from assigning to a const.
const fixed = 1;
console.log(fixed);
fixed = 2;
