// Calling a missing method, uncaught.
const o = { a: 1 };
o.run();
