// clearTimeout and clearInterval: before a timer fires, from inside another timer, of an id
// that does not exist, and of the timer that is running. Events are tens of milliseconds
// apart, so that a busy machine delaying one callback does not reorder them (in node either).
const fired = [];
const a = setTimeout(() => console.log("a must not fire"), 5);
clearTimeout(a);
const b = setTimeout(() => console.log("b must not fire"), 120);
setTimeout(() => { console.log("c clears b"); clearTimeout(b); }, 50);
clearTimeout(123456);
clearTimeout(undefined);
clearTimeout("nothing");
let ticks = 0;
const iv = setInterval(() => {
  ticks++;
  console.log("interval tick", ticks);
  if (ticks === 3) clearInterval(iv);
}, 10);
const self = setTimeout(() => { clearTimeout(self); console.log("self-clearing timer ran once"); }, 200);
// The two are one function in node: clearInterval stops a timeout and clearTimeout an interval.
const d = setTimeout(() => console.log("d must not fire"), 3);
clearInterval(d);
const e = setInterval(() => console.log("e must not fire"), 3);
clearTimeout(e);
console.log(typeof a === typeof b, typeof setTimeout, typeof clearInterval, setTimeout.length, clearTimeout.length);
setTimeout(() => console.log("done after", ticks, "ticks"), 300);
