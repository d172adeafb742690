// A delay counts from when setTimeout is called, as node counts it (its loop's time is brought
// up to date for each timer set): a timer set after 40 ms of synchronous work with a 20 ms
// delay fires after one set at the start with 50 ms, and inside a callback, a timer set 30 ms
// into the callback with 35 ms fires after one set at its start with 60 ms.
const start = Date.now();
setTimeout(() => console.log("first: set first, 50 ms"), 50);
while (Date.now() - start < 40) {}
setTimeout(() => {
  console.log("second: set after 40 ms of work, 20 ms");
  const turn = Date.now();
  setTimeout(() => console.log("third: 60 ms from the callback's start"), 60);
  while (Date.now() - turn < 30) {}
  setTimeout(() => console.log("fourth: 35 ms, set 30 ms into the callback"), 35);
}, 20);
console.log("synchronous work done");
