"use strict";
// Request as node 20 (undici) has it: the URL parsed and serialized as `new URL` does, the
// method normalized, a Headers of its own, a body extracted with its Content-Type, text(),
// json() and arrayBuffer() as promises, clone(), and undici's errors.
const r = new Request("http://Auth/a/../b?x=1#f", { method: "post", body: "h\u00e9llo", headers: { "X-A": "1" } });
console.log(r.method, r.url, r.headers.get("content-type"), r.headers.get("x-a"), r.body === null, typeof r.body);
console.log(Object.keys(r), JSON.stringify(r), r instanceof Request, Object.prototype.toString.call(r), String(r));
console.log("method" in r, "url" in r, "headers" in r, r.headers instanceof Headers);
console.log(typeof Request, Request.name, Request.length, typeof Request.prototype.text, typeof Request.prototype.clone);
for (const m of ["get", "Get", "PATCH", "options", "delete", "foo", "put", "head", "post", "X-Y"]) {
  console.log(m, new Request("http://a", { method: m }).method);
}
for (const bad of ["CONNECT", "trace", "TrAcK", "a b", "", "\u00e9", "a\nb"]) {
  try { new Request("http://a", { method: bad }); console.log("ok", bad); } catch (e) { console.log(e.name, e.message); }
}
for (const input of ["/x", "", "http://[::1", "nope"]) {
  try { new Request(input); console.log("ok", input); } catch (e) { console.log(e.name, e.message, e.cause instanceof TypeError, e.cause && e.cause.message); }
}
const tries = [
  () => new Request(),
  () => new Request("http://u:p@a/"),
  () => new Request("http://u@a/"),
  () => new Request("http://a", { body: "x" }),
  () => new Request("http://a", { method: "HEAD", body: "" }),
  () => new Request("http://a", 5),
  () => new Request(new Request("http://a", { method: "POST", body: "x" }), { method: "GET" }),
];
for (const t of tries) {
  try { t(); console.log("ok"); } catch (e) { console.log(e.name, e.message); }
}
try { Request("http://a"); } catch (e) { console.log(e.name); }
// Bodies and the Content-Type each kind of body gets.
const bodies = [
  ["text", "x", undefined],
  ["params", new URLSearchParams("a=1&b=\u00e9"), undefined],
  ["bytes", new Uint8Array([1, 2, 255]), undefined],
  ["buffer", new Uint8Array([7, 8]).buffer, undefined],
  ["number", 42, undefined],
  ["own type", "x", { "content-type": "a/b" }],
  ["null", null, undefined],
];
for (const [name, body, headers] of bodies) {
  const q = new Request("http://a", { method: "PUT", body, headers });
  console.log(name, q.headers.get("content-type"), q.body === null, typeof q.body);
}
// Defaults, the URL's forms, and a URL object as input.
const plain = new Request("HTTP://A:80/");
console.log(plain.method, plain.url, plain.body, [...plain.headers]);
console.log(new Request(new URL("http://z/p?q")).url, new Request("http://a:8080").url, new Request("https://b/%7e/ /").url);
// A Request as input: its members are the defaults, init's replace them; clone copies.
const g = new Request("http://a/", { headers: { q: "1" } });
const g2 = new Request(g);
console.log(g2.method, [...g2.headers], g2.url, g2.headers !== g.headers);
const g3 = new Request(g, { method: "PUT", body: "b", headers: new Headers({ z: "9" }) });
console.log(g3.method, [...g3.headers], g3.url);
const c = r.clone();
console.log(c.method, c.url, c !== r, c.headers !== r.headers, c.headers.get("x-a"), c instanceof Request);
c.headers.set("x-a", "changed");
console.log(r.headers.get("x-a"), c.headers.get("x-a"));
// init's members are read as a dictionary's: getters run, inherited members count, in
// undici's order (method, headers, body).
const seen = [];
const init = Object.create({ get method() { seen.push("method"); return "PUT"; } });
Object.defineProperty(init, "body", { get() { seen.push("body"); return "z"; }, enumerable: true });
Object.defineProperty(init, "headers", { get() { seen.push("headers"); return { h: "1" }; }, enumerable: true });
const fromInit = new Request("http://a", init);
console.log(seen, fromInit.method, fromInit.headers.get("h"));
// The members cannot be written.
try { r.method = "GET"; console.log("wrote"); } catch (e) { console.log(e.name); }
console.log(r.method);
(async () => {
  console.log(await c.text(), await r.text(), await new Request("http://a", { method: "POST", body: '{"a":[1,2]}' }).json());
  const ab = await new Request("http://a", { method: "POST", body: "h\u00e9llo" }).arrayBuffer();
  console.log(ab instanceof ArrayBuffer, ab.byteLength, [...new Uint8Array(ab)]);
  console.log(JSON.stringify(await new Request("http://a").text()));
  const bytes = new Request("http://a", { method: "POST", body: new Uint8Array([0xe2, 0x82, 0xac, 0xff]) });
  console.log(await bytes.text());
  try { await new Request("http://a", { method: "POST", body: "{" }).json(); } catch (e) { console.log(e.name); }
  const p = new Request("http://a").json();
  console.log(p instanceof Promise);
  try { await p; } catch (e) { console.log(e.name); }
  for (const m of ["text", "json", "arrayBuffer", "clone"]) {
    try { await Request.prototype[m].call({}); console.log("ok", m); } catch (e) { console.log(m, e.name); }
  }
})();
