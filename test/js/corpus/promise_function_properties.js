// The functions promises make (executor's resolve and reject, Promise.all's and kin's element functions, a capability executor): length, name, own properties, no prototype, not constructors.
function describe(label, f) {
  const own = Object.getOwnPropertyNames(f).join(",");
  let constructs = "constructs";
  try { new f(); } catch (e) { constructs = e.constructor.name; }
  console.log(label, typeof f, f.length, JSON.stringify(f.name), own, f.hasOwnProperty("prototype"), Object.isExtensible(f), constructs);
}
new Promise((resolve, reject) => {
  describe("resolve", resolve);
  describe("reject", reject);
});
const elements = [];
const spy = Promise.resolve(1);
spy.then = (onFulfilled, onRejected) => { elements.push([onFulfilled, onRejected]); };
Promise.all([spy]);
Promise.allSettled([spy]);
Promise.any([spy]);
describe("all resolve element", elements[0][0]);
describe("allSettled resolve element", elements[1][0]);
describe("allSettled reject element", elements[1][1]);
describe("any reject element", elements[2][1]);
function Capture(executor) { describe("capability executor", executor); executor(() => {}, () => {}); }
Promise.resolve.call(Capture, 1);
new Promise((resolve) => {
  console.log("delete length", delete resolve.length, resolve.length, Object.getOwnPropertyNames(resolve).join(","));
  Object.defineProperty(resolve, "name", { value: "renamed" });
  console.log("redefined name", resolve.name, Object.getOwnPropertyNames(resolve).join(","));
});
