// Promise.all and kin read each value's `then` as a property, once per value and in order, call C.resolve once per value, and reject (closing the iterator) when a then getter or C.resolve throws.
const order = [];
function loggedPromise(name, value) {
  const p = Promise.resolve(value);
  Object.defineProperty(p, "then", {
    get() {
      order.push("get then " + name);
      return (onFulfilled, onRejected) => {
        order.push("call then " + name);
        return Promise.prototype.then.call(p, onFulfilled, onRejected);
      };
    },
  });
  return p;
}
Promise.all([loggedPromise("a", 1), loggedPromise("b", 2)]).then((v) => console.log("all", v, order.join("; ")));
console.log("synchronous part:", order.join("; "));

const bad = Promise.resolve(1);
Object.defineProperty(bad, "then", { get() { throw new Error("then getter threw"); } });
let closed = 0;
const iterable = {
  [Symbol.iterator]() {
    let i = 0;
    return {
      next() { i += 1; return { value: i === 1 ? Promise.resolve(0) : bad, done: i > 2 }; },
      return() { closed += 1; return {}; },
    };
  },
};
Promise.all(iterable).catch((e) => console.log("all rejected:", e.message, "closed", closed));
Promise.race(iterable).catch((e) => console.log("race rejected:", e.message, "closed", closed));
Promise.allSettled([bad]).catch((e) => console.log("allSettled rejected:", e.message));
Promise.any([bad]).catch((e) => console.log("any rejected:", e.message));

class ThrowingResolve extends Promise {}
Object.defineProperty(ThrowingResolve, "resolve", { get() { throw new Error("resolve getter threw"); } });
ThrowingResolve.all([1]).catch((e) => console.log("resolve getter:", e.message));
class BadResolve extends Promise {}
BadResolve.resolve = () => { throw new Error("resolve threw"); };
BadResolve.race(iterable).catch((e) => console.log("resolve threw:", e.message, "closed", closed));

const thenable = { then(resolve) { console.log("thenable's then called"); resolve("from thenable"); } };
Promise.race([thenable]).then((v) => console.log("race of a thenable", v));
const weird = Promise.resolve(9);
weird.constructor = Object;
console.log("Promise.resolve wraps one whose constructor is not Promise:", Promise.resolve(weird) !== weird);
