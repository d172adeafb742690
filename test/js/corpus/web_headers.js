"use strict";
// Headers as node 20 (undici) has it: case-insensitive names, values joined with ", ",
// Set-Cookie kept apart, iteration sorted by name, undici's errors, and console.log's layout.
const h1 = new Headers({ "Content-Type": "text/plain", "X-B": " two ", "x-a": "1" });
h1.append("X-A", "2");
h1.append("Set-Cookie", "a=1");
h1.append("set-cookie", "b=2");
console.log(h1.get("x-a"), h1.get("content-type"), JSON.stringify(h1.get("x-b")), h1.get("nope"), h1.has("X-A"), h1.has("q"));
console.log([...h1]);
console.log([...h1.keys()], [...h1.values()]);
console.log(h1.getSetCookie(), h1.get("set-cookie"));
h1.set("x-a", "3"); h1.delete("content-type");
for (const [k, v] of h1.entries()) console.log(k, v);
h1.forEach(function (v, k, o) { console.log(k, v, o === h1, this); }, "T");
console.log(new Headers([["a", "1"], ["b", "2"]]).get("b"), new Headers(h1).get("x-a"), new Headers().has("a"));
for (const bad of [["a b", "1"], ["", "1"], ["a", "x\ny"], ["a", "x\0"], ["é", "1"]]) {
  try { new Headers([bad]); console.log("ok", bad); } catch (e) { console.log(e.name, e.message); }
}
try { h1.append("a:b", "1"); } catch (e) { console.log(e.name, e.message); }
try { h1.get("a b"); } catch (e) { console.log(e.name, e.message); }
try { h1.set("ok", "a\rb"); } catch (e) { console.log(e.name, e.message); }
try { new Headers([["a"]]); } catch (e) { console.log(e.name, e.message); }
try { new Headers(5); } catch (e) { console.log(e.name, e.message); }
try { Headers(); } catch (e) { console.log(e.name, e.message); }
console.log(h1 instanceof Headers, typeof Headers, Headers.length, Object.keys(h1), String(h1), Object.prototype.toString.call(h1));
const v = new Headers({ a: "x\u00e9y", b: 1, c: " \t sp \t " });
console.log(JSON.stringify([...v]));
console.log(new Headers({ A: "1", a: "2" }).get("a"));
{
const tries = [() => new Headers({ a: "€" }), () => new Headers({ "€": "1" }), () => new Headers().append("a", "€"),
  () => new Headers().get("€"), () => new Headers(null), () => new Headers(undefined).has("a"), () => new Headers("ab"),
  () => new Headers([["a", "1", "2"]]), () => new Headers([5]), () => new Headers().get(), () => new Headers().append("a"),
  () => new Headers().set("a"), () => new Headers().delete(), () => new Headers().has(),
  () => new Headers().get(1), () => new Headers().get(undefined), () => new Headers({ a: undefined }).get("a"),
  () => new Headers({ a: null }).get("a"), () => new Headers([["x", ""]]).get("x"), () => new Headers({ "x": "a\tb" }).get("x")];
for (const t of tries) {
  try { console.log(JSON.stringify(t())); } catch (e) { console.log(e.name, e.message); }
}
}
{
const h = new Headers([["b", "2"], ["a", "1"]]);
console.log(Object.keys(h), h.size, typeof h.get, h.constructor === Headers, Object.getPrototypeOf(h) === Headers.prototype);
console.log(JSON.stringify(h), Object.entries(h));
const it = h.entries(); console.log(it.next(), it.next(), it.next());
console.log(Array.from(h.keys()), new Map(h).get("a"));
try { Headers.prototype.get.call({}, "a"); } catch (e) { console.log(e.name, e.message); }
try { h.forEach(5); } catch (e) { console.log(e.name, e.message); }
try { h.forEach(); } catch (e) { console.log(e.name, e.message); }
const big = new Headers();
for (let i = 0; i < 50; i++) big.append(`x-${(i * 7) % 50}`, String(i));
console.log([...big.keys()].join(","));
}
{
const h = new Headers({"X-Z":"1", a:"1"}); h.append("set-cookie","a=1"); h.append("set-cookie","b=2"); h.append("a", "2");
console.log(h); console.log(new Headers()); console.log([new Headers({q:"x"})], {h: new Headers({"content-type": "y"})});
const big = new Headers(); for (let i = 0; i < 8; i++) big.append("x-header-number-" + i, "value number " + i); console.log(big);
}
{
  // A copy of a Headers: what its iteration yields (names lower-cased, sorted, Set-Cookie's values apart).
  const source = new Headers([["X-B", "2"], ["set-cookie", "a=1"], ["Set-Cookie", "b=2"], ["x-a", "1"], ["X-A", "3"]]);
  const copy = new Headers(source);
  console.log([...copy], copy.getSetCookie(), copy);
  source.set("x-b", "changed");
  console.log(copy.get("x-b"), source.get("x-b"));
}
