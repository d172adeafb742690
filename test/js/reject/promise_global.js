// expect: 4:11 Promise
// anchor: Promise
// Promise is out.
const p = Promise.resolve(1);
console.log(p);
