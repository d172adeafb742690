// An exception a timer's callback lets out ends the program as node ends it: the timers
// after it never run.
setTimeout(() => console.log("first timer runs"), 5);
setTimeout(() => { throw new TypeError("thrown from a timer"); }, 10);
setTimeout(() => console.log("never printed"), 20);
console.log("scheduled");
