"use strict";
// DataView as node 20 has it: the constructor's checks and V8's messages, every get and set
// method in both byte orders, the conversions of offsets and values, bounds errors, the
// getters, console.log's form; then 3,000 random reads and writes at random offsets with
// random values, the bytes compared after each.
const b = new ArrayBuffer(8);
const t = (f) => { try { console.log(f()); } catch (e) { console.log(e.name + ": " + e.message); } };
t(() => new DataView());
t(() => new DataView({}));
t(() => new DataView(new Uint8Array(4)));
t(() => new DataView(b, 9));
t(() => new DataView(b, 4, 5));
t(() => new DataView(b, -1));
t(() => new DataView(b, 8).byteLength);
t(() => new DataView(b, 2, 0).byteLength);
t(() => new DataView(b, "3").byteOffset);
t(() => new DataView(b, 1.7, 2.2).byteLength);
t(() => DataView(b));
const d = new DataView(b, 2);
for (const [name, size] of [["Int8", 1], ["Uint8", 1], ["Int16", 2], ["Uint16", 2], ["Int32", 4], ["Uint32", 4], ["Float32", 4], ["Float64", 8]]) {
  t(() => d["get" + name](7 - size));
  t(() => d["get" + name](7 - size + 1));
  t(() => d["set" + name](-1, 1));
}
t(() => d.getInt8(1.5));
t(() => d.getInt8("2"));
t(() => d.getInt8());
t(() => d.getInt8(NaN));
t(() => d.getInt8(Infinity));
t(() => d.getInt8(-0.5));
const values = [0, 1, -1, 127, 128, 255, 256, 300, -129, 32767, 32768, 65535, 65536, -32769, 2147483647, 2147483648, 4294967295, 4294967296, -2147483649,
  1.5, -1.5, 2.5, NaN, Infinity, -Infinity, -0, 1e40, 3.4028235e38, 1e-45, 5e-324, 0.1, "12", true, null, undefined];
for (const x of values) {
  const out = [];
  for (const name of ["Int8", "Uint8", "Int16", "Uint16", "Int32", "Uint32", "Float32", "Float64"]) {
    for (const little of [false, true]) {
      const v = new DataView(new ArrayBuffer(8));
      v["set" + name](0, x, little);
      out.push(name + (little ? "le" : "be") + "=" + Array.from(new Uint8Array(v.buffer)).join(".") + ":" + Object.is(v["get" + name](0, little), -0) + ":" + v["get" + name](0, little) + "/" + v["get" + name](0, !little));
    }
  }
  console.log(String(x), out.join(" "));
}
console.log(d, new DataView(new ArrayBuffer(0)));
console.log(Object.prototype.toString.call(d), d.byteLength, d.byteOffset, d.buffer === b, DataView.length, d.setInt8(0, 300), d instanceof DataView, typeof DataView);
console.log([d], { a: { b: { c: d } } }, Object.keys(d), "byteLength" in d, d.hasOwnProperty("byteLength"));
const u8 = new Uint8Array(b);
console.log(Array.from(u8), d.getUint16(0), d.getUint16(0, true));
// A view sees writes through the typed array over the same buffer, and the other way.
u8[3] = 0xab;
d.setUint8(5, 0xcd);
console.log(d.getUint8(1), u8[7], Array.from(u8));
{
  let seed = 99;
  const next = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  const names = ["Int8", "Uint8", "Int16", "Uint16", "Int32", "Uint32", "Float32", "Float64"];
  const pool = [0, 1, -1, 255, 65535, -32768, 2147483647, -2147483648, 4294967295, 0.5, -2.75, 1e10, NaN, 1 / 3, 123456.789];
  const buffer = new ArrayBuffer(16);
  const bytes = new Uint8Array(buffer);
  const out = [];
  for (let i = 0; i < 3000; i++) {
    const start = next(17);
    const view = new DataView(buffer, start);
    const name = names[next(names.length)];
    const offset = next(12) - 2;
    const little = next(2) === 1;
    let r;
    try {
      if (next(2) === 0) {
        view["set" + name](offset, pool[next(pool.length)] * (next(3) + 1), little);
        r = "set";
      } else {
        r = String(view["get" + name](offset, little));
      }
    } catch (e) { r = e.name; }
    out.push([start, name, offset, little, r, bytes.join(".")].join(" "));
  }
  console.log(out.join("\n"));
}
