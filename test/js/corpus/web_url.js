"use strict";
// URL as node 20 has it: parsing with and without a base (special and other schemes, the
// host parser's IPv4 and IPv6 forms, percent-encoding per component, dot segments, default
// ports), every getter and setter, searchParams kept in step both ways, canParse, errors;
// then random inputs, bases and setter values, node's output the oracle.
const show = (u) => [u.href, u.origin, u.protocol, u.username, u.password, u.host, u.hostname, u.port, u.pathname, u.search, u.hash].join(" | ");
const tryParse = (input, base) => {
  try { return show(base === undefined ? new URL(input) : new URL(input, base)); } catch (e) { return e.name + ": " + e.message + " " + e.code; }
};
const inputs = [
  "http://example.com", "HTTPS://User:Pa ss@EXAMPLE.com:443/a/b/../c/./d?x=1 2&y='#frag`x",
  "http://example.com:8080/", "http://example.com:0080/", "ws://h:80/", "wss://h:443", "ftp://h:21/f",
  "http://0x7f.1/", "http://127.1/", "http://0177.0.0.1/", "http://2130706433/", "http://0x/", "http://1.2.3.4./",
  "http://256.0.0.1/", "http://1.2.3.4.5/", "http://1.2.3.09/", "http://4294967296/", "http://foo.09/", "http://foo.0x/",
  "http://[::1]/", "http://[0:0:0:0:0:0:0:1]:81/", "http://[1:0:0:2:0:0:0:3]/", "http://[::ffff:192.168.0.1]/",
  "http://[1::]/", "http://[::]/", "http://[1:2:3:4:5:6:7:8]/", "http://[1:2:3:4:5:6:7:8:9]/", "http://[::1/", "http://[g::]/",
  "http://[1:2::3::4]/", "http://[::1.2.3]/", "http://[::1.2.3.256]/", "http://[0001:0db8::]/",
  "http://a b/", "http://a%20b/", "http://%41.com/", "http://a<b/", "http://a^b/", "http://a|b/", "http://ex%2ample/",
  "http://:80/", "http://user@/", "http://@host/", "http://u@h:/", "http://h:65535/", "http://h:65536/", "http://h:8x/",
  "http:example.com/x", "http:/example.com/x", "http:\\\\example.com\\a\\b", "http://h/a/%2e%2E/b/%2e/c", "http://h/a/..",
  "http://h/a/b/.", "http://h/ a/{b}/`c`/\"d\"/<e>/^f", "http://h/?a b\"<>#'`", "http://h/#a b\"<>`'#",
  "http://h/é?é#é", "http://h/\u00ff\u0100\uD83D\uDE00", "  http://h/a\tb\nc\r  ", "\u0000http://h/\u001f",
  "mailto:x@y.com", "mailto:X Y?subject=a b#c d", "javascript:alert(1)", "data:text/plain,hi there",
  "foo://host/a/../b?q#f", "foo://HoSt:99/p", "foo://[::1]:1/", "foo:/a/./b/../c", "foo://", "foo:///x", "foo://a b/",
  "foo://h%zz/", "foo://h/%2e./x", "urn:isbn:0451450523", "blob:http://h/uuid", "web+x:/.//p", "sc://ñ/x",
  "file:///etc/passwd", "file://localhost/x", "file://host/share/f", "file:/x/y", "file:x", "FILE:///C:/a/../..",
  "http://h/a?b#c?d#e", "http://h:80@x/", "http://a:b:c@h/", "http://a@b@h/", "http://h\\p\\q", "x", "", "//h/p",
  "http://h/%", "http://h/%zz%41", "https://h/\u2028", "HTTP://h:443/", "https://h:80/", "http://h.:1/", "http://.h/",
];
for (const i of inputs) console.log(JSON.stringify(i), tryParse(i));
const bases = ["http://a/b/c/d;p?q", "foo://h/a/b", "file:///x/y", "https://u:p@h:8/a?x#y"];
const relatives = ["g", "./g", "g/", "/g", "//g", "?y", "g?y", "#s", "g#s", "", ".", "./", "..", "../", "../g", "../..",
  "../../../g", "/./g", "/../g", "g.", ".g", "g..", "..g", "./../g", "./g/.", "g/./h", "g/../h", "g;x=1/./y", "http:g",
  "http:/g", "http://g", "\\\\g\\h", "foo:g", "file:g", "?", "#", "https:g", "mailto:q", "//[::1]/x", "g?a b#c d"];
for (const b of bases) for (const r of relatives) console.log(JSON.stringify([r, b]), tryParse(r, b));
console.log(tryParse("#s", "mailto:z"), tryParse("#", "mailto:z?q"), tryParse("?x", "mailto:z"), tryParse("", "mailto:z"));
console.log(tryParse("g", "not a url"), tryParse("http://x", undefined));
console.log(URL.canParse("http://x"), URL.canParse("nope"), URL.canParse("g", "http://a/"), URL.canParse("g", "bad"), URL.canParse.length, URL.length);
try { new URL(); } catch (e) { console.log(e.name, e.message, e.code); }
try { URL("http://x"); } catch (e) { console.log(e.name, e.message); }
try { new URL("http://h/").toString.call({}); } catch (e) { console.log(e.name, e.message); }
const u = new URL("http://u:p@example.com:8080/a/b?x=1&y=2#h");
console.log(String(u), `${u}`, JSON.stringify({ u }), u.toJSON(), u instanceof URL, Object.prototype.toString.call(u), Object.keys(u), typeof URL);
// Setters: each component, with values that fit and values that do not.
const setterCases = {
  href: ["https://n/x?q#f", "bad"],
  protocol: ["https", "ftp:", "foo", "HTTP:x", "1ab", "", "ws"],
  username: ["", "us er", "a@b:c", "é"],
  password: ["", "p w", ":@/", "x"],
  host: ["new.example:99", "new.example", "[::2]:7", "a b", "", "x:", "x:abc", "x:99999", "y:80", "h/p?q", "0x10.1"],
  hostname: ["n.example", "a:1", "", "[::3]", "bad host", "1.2.3"],
  port: ["", "81", "80", "99x", "x", "65536", "0", " 1"],
  pathname: ["/n/./m/../o", "no-slash", "", "/a b?c#d", "\\x\\y", "/%2e%2e/z"],
  search: ["", "?", "a=1 2", "??b", "#c", "é=ü"],
  hash: ["", "#", "x y", "##z", "é"],
};
for (const [k, values] of Object.entries(setterCases)) {
  for (const base of ["http://u:p@example.com:8080/a/b?x=1&y=2#h", "foo://h/p?q#f", "mailto:m@x", "file:///f"]) {
    for (const v of values) {
      const w = new URL(base);
      let r;
      try { w[k] = v; r = show(w); } catch (e) { r = e.name + ": " + e.message; }
      console.log(k, JSON.stringify(v), base, "->", r);
    }
  }
}
try { u.origin = "x"; } catch (e) { console.log(e.name); }
// searchParams both ways.
const s = new URL("http://h/p?a=1&b=2&a=3#f");
const sp = s.searchParams;
console.log(sp.get("a"), sp.getAll("a"), sp.size, s.searchParams === sp);
sp.append("c", "x y");
console.log(s.href, s.search);
sp.delete("a");
console.log(s.href);
sp.set("b", "é&=");
console.log(s.href);
sp.sort();
console.log(s.href);
sp.delete("b"); sp.delete("c");
console.log(s.href, JSON.stringify(s.search));
s.search = "?z=9&z=8";
console.log(sp.getAll("z"), [...sp], s.href);
s.href = "http://other/?k=v";
console.log(sp.get("k"), sp.get("z"), sp.toString());
s.search = "";
console.log(sp.size, s.href);
// Random inputs: pieces of URLs joined at random, parsed alone and against bases, and set.
{
  let seed = 2024;
  const next = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  const pieces = ["http:", "https:", "foo:", "file:", "mailto:", "//", "/", "\\", "a", "B", "1", "0x1f", "07", ".", "..", "%2e",
    "?", "#", "@", ":", "80", "443", "[", "]", "::", "1.2.3.4", " ", "%41", "%", "é", "€", "😀", "\t", "~", "+", "=", "&", "'", "`", "{", "^"];
  const setters = ["protocol", "username", "password", "host", "hostname", "port", "pathname", "search", "hash"];
  const text = () => { let s = ""; const len = next(9); for (let j = 0; j < len; j++) s += pieces[next(pieces.length)]; return s; };
  const out = [];
  for (let i = 0; i < 2500; i++) {
    const input = text();
    const base = ["http://h/a/b", "foo://x/y/z", "file:///c/d", undefined][next(4)];
    const line = [input, String(base), tryParse(input, base)];
    if (i % 3 === 0) {
      try {
        const w = new URL(["http://u:p@h:1/a?b#c", "foo://h/p?q#f", "file:///a/b"][next(3)]);
        const k = setters[next(setters.length)];
        const v = text();
        line.push(k, v);
        w[k] = v;
        line.push(show(w));
      } catch (e) { line.push(e.name + ": " + e.message); }
    }
    // A host that is not ASCII needs IDNA, which sluice refuses (docs/JS.md): such lines are
    // left out on both sides.
    const joined = line.join(" ");
    out.push(/xn--|IDNA/.test(joined) ? "idna" : JSON.stringify(line));
  }
  console.log(out.join("\n"));
}
// console.log's form, at the top, nested and past the depth.
console.log(new URL("http://u:p@h:8/a?b=1&c=%20#c"));
console.log([new URL("mailto:x")], { a: { b: { c: new URL("http://h/") } } });
console.log(new URL("http://h/?" + "k=v&".repeat(30)));
