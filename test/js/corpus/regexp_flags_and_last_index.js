// Flags, their getters and toString; lastIndex with the global and sticky flags.
console.log(/a/.flags, /a/dgimsuy.flags, /a/gim.toString(), String(/a\/b/), /x/.global, /x/g.global);
console.log(new RegExp("a/b", "gi").source, new RegExp("").toString(), new RegExp("\n").source);
console.log(new RegExp(/ab/g).flags, new RegExp(/ab/g, "i").toString(), RegExp("x") instanceof RegExp);
const g = /o/g;
console.log(g.test("foo"), g.lastIndex, g.test("foo"), g.lastIndex, g.test("foo"), g.lastIndex);
const y = /o/y;
console.log(y.test("foo"), y.lastIndex);
y.lastIndex = 1;
console.log(y.test("foo"), y.lastIndex, y.exec("foo"), y.lastIndex);
const all = /a/g;
console.log("aXa".match(all), all.lastIndex, "aXa".search(all), all.lastIndex);
console.log(/a$/m.exec("a\nb").index, /^b/m.exec("a\nb").index, /a.b/s.test("a\nb"), /a.b/.test("a\nb"));
console.log(/É/i.test("é"), /[é]/i.test("É"), /[A-Z]+/i.exec("abc")[0]);
console.log(/^.$/u.test("😀"), /^.$/.test("😀"), /\u{1F600}/u.test("x😀"), /[😀-😂]/u.test("😁"));
console.log("😀😀".replace(/(?:)/gu, "-"), "😀".replace(/(?:)/g, "-").length);
console.log({ r: /x/g, list: [/y/] }, [/a/].join(), `${/a/}`, /a/ + "", Object.prototype.toString.call(/a/));
console.log(JSON.stringify(/a/), Object.keys(/a/), typeof /a/, /a/.constructor === RegExp);
console.log(/\w/i.test("\u212a"), /\w/iu.test("\u212a"), /[^k]/i.test("\u212a"), /[s]/i.test("\u017f"), /[s]/iu.test("\u017f"));
