// Promise's statics, then and finally on another constructor: a subclass with a logging constructor, a constructor that hands out its executor's functions, a non-constructor this, Promise.resolve replaced on a subclass.
const log = [];
class Logged extends Promise {
  constructor(executor) {
    log.push("Logged constructor");
    super(executor);
  }
}
const all = Logged.all([1, Promise.resolve(2)]);
console.log("all instanceof Logged", all instanceof Logged, all.constructor === Logged);
const derived = Logged.resolve(3).then((v) => v * 2);
console.log("then instanceof Logged", derived instanceof Logged);
console.log("race", Logged.race([]) instanceof Logged, "any", Logged.any([4]) instanceof Logged);
console.log("allSettled", Logged.allSettled([]) instanceof Logged);
console.log("reject", Logged.reject(5).catch(() => {}) instanceof Logged);
console.log("resolve keeps its own", Logged.resolve(all) === all, Promise.resolve(all) === all);
console.log("finally", Logged.resolve(6).finally(() => {}) instanceof Logged);
console.log(log.join(","));
all.then((v) => console.log("all value", v));
derived.then((v) => console.log("derived value", v));

class Counted extends Promise {}
let resolveCalls = 0;
Counted.resolve = (v) => {
  resolveCalls += 1;
  return Promise.resolve(v);
};
Counted.all([1, 2, 3]).then((v) => console.log("Counted.all", v, "resolve calls", resolveCalls));
console.log("Counted.resolve called once per value, synchronously:", resolveCalls);

function Deferred(executor) {
  let res;
  let rej;
  executor((v) => { console.log("custom resolve", v); res = v; }, (e) => { console.log("custom reject", e); rej = e; });
  this.result = () => [res, rej];
}
Deferred.resolve = (v) => Promise.resolve(v);
const d = Promise.all.call(Deferred, [7, 8]);
console.log("custom capability object", d instanceof Deferred, d instanceof Promise);
Promise.reject.call(Deferred, "nope");
Promise.resolve.call(Deferred, "yes");

for (const bad of [undefined, 1, {}, Math.max]) {
  try {
    Promise.all.call(bad, []);
    console.log("no throw");
  } catch (e) {
    console.log(e.constructor.name);
  }
}
try { Promise.resolve.call(undefined, 1); } catch (e) { console.log(e.constructor.name, e.message); }
function TwiceExecutor(executor) {
  executor(undefined, undefined);
  executor(() => {}, () => {});
  try { executor(() => {}, () => {}); } catch (e) { console.log("third call:", e.constructor.name); }
}
TwiceExecutor.resolve = Promise.resolve;
console.log("executor may be called again while both are undefined", Promise.race.call(TwiceExecutor, []) instanceof TwiceExecutor);
function NotCallable(executor) { executor(1, 2); }
try { Promise.resolve.call(NotCallable, 1); } catch (e) { console.log("non-callable resolve:", e.constructor.name); }
