// Promise: then, catch, finally, resolve, reject, all, allSettled, race, any, thenables, queueMicrotask, and the order node runs their jobs in.
console.log("start");
const p = new Promise((resolve) => { console.log("executor"); resolve(1); });
p.then((v) => { console.log("then", v); return v + 1; }).then((v) => console.log("then2", v));
Promise.resolve(5).then((v) => console.log("resolved", v));
Promise.reject(new Error("no")).catch((e) => console.log("caught", e.message)).finally(() => console.log("fin"));
queueMicrotask(() => console.log("micro"));
Promise.all([1, Promise.resolve(2), new Promise((r) => r(3))]).then((v) => console.log("all", v));
Promise.allSettled([1, Promise.reject(2)]).then((v) => console.log("settled", v));
Promise.race([new Promise(() => {}), Promise.resolve("fast")]).then((v) => console.log("race", v));
Promise.any([Promise.reject(1), Promise.resolve(2)]).then((v) => console.log("any", v));
Promise.any([Promise.reject(1)]).catch((e) => console.log("any-rej", e.name, e.message, e.errors));
const thenable = { then(r) { console.log("thenable called"); r("T"); } };
Promise.resolve(thenable).then((v) => console.log("thenable", v));
console.log(p, Promise.resolve(), new Promise(() => {}), typeof Promise, p instanceof Promise);
const rej = Promise.reject(3); rej.catch(() => {});
console.log(rej);
Promise.resolve(1).finally(() => 2).then((v) => console.log("finally passes", v));
Promise.resolve(1).then(2).then((v) => console.log("non-callable", v));
try { Promise(); } catch (e) { console.log(e.message); }
try { new Promise(5); } catch (e) { console.log(e.message); }
const self = new Promise((r) => setTimeoutLess(r));
function setTimeoutLess(r) { queueMicrotask(() => r(self)); }
self.catch((e) => console.log(e.constructor.name, e.message));
console.log("end");
