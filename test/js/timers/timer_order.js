// setTimeout's order: by due time, equal delays in the order they were set, 0 taken as 1,
// and microtasks run after each timer's callback (as node runs them since v11). The delays are
// tens of milliseconds apart: node on a busy machine reorders closer ones itself.
const order = (name) => () => console.log(name);
setTimeout(order("c: 100 ms"), 100);
setTimeout(order("a: 0 ms, set first"), 0);
setTimeout(order("b: 1 ms, set second (0 is 1)"), 1);
setTimeout(order("d: 20 ms, first of two"), 20);
setTimeout(order("e: 20 ms, second of two"), 20);
setTimeout(order("f: undefined delay is 1 ms"));
setTimeout(order("g: a negative delay is 1 ms"), -5);
setTimeout(order("h: NaN is 1 ms"), "soon");
setTimeout(order("i: a numeric string counts"), "60");
setTimeout(() => {
  console.log("j: 40 ms, then its microtasks before the next timer");
  Promise.resolve().then(() => console.log("k: microtask of j"));
  queueMicrotask(() => console.log("l: queueMicrotask of j"));
}, 40);
setTimeout(() => console.log("m: 40 ms, after j's microtasks"), 40);
Promise.resolve().then(() => console.log("1: the main script's microtasks come first"));
console.log("0: synchronous");
