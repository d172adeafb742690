// Date's formats: console.log, toString and its halves, ISO, RFC 7231, JSON, locale.
const d = new Date(Date.UTC(2024, 1, 29, 13, 45, 30, 123));
console.log(d);
console.log(String(d));
console.log(d.toISOString(), d.toJSON(), d.toUTCString(), d.toGMTString());
console.log(d.toDateString(), "|", d.toTimeString());
console.log(d.toLocaleString(), d.toLocaleDateString(), d.toLocaleTimeString());
console.log(new Date(0).toLocaleTimeString(), new Date(43200000).toLocaleTimeString());
console.log(JSON.stringify({ when: new Date(0), bad: new Date(NaN) }), [new Date(0)], { d: new Date(86400000) });
console.log(`${new Date(0)}`, new Date(0) + 1, new Date(5) - 1, new Date(5) < new Date(6), +new Date(7));
console.log(new Date(NaN), String(new Date(NaN)), new Date(NaN).toUTCString(), new Date(NaN).toJSON());
console.log(new Date(-62198755200000).toString(), new Date(-62198755200000).toUTCString());
console.log(new Date(253402300800000).toISOString(), new Date(-1).toISOString(), new Date(-1e15).toISOString(), new Date(8.64e15).toISOString());
console.log(Object.prototype.toString.call(d), d instanceof Date, d.constructor === Date);
console.log(d[Symbol.toPrimitive]("number"), d[Symbol.toPrimitive]("default"));
try {
  new Date(NaN).toISOString();
} catch (err) {
  console.log(err.name, err.message);
}
