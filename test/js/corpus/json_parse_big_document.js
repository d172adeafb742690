// A larger document parses and reports its shape.
const items = [];
for (let i = 0; i < 50; i++) items.push({ i, sq: i * i, name: "n" + i, odd: i % 2 === 1 });
const doc = JSON.stringify({ items, meta: { count: 50 } });
const back = JSON.parse(doc);
console.log(doc.length, back.items.length, back.items[49], back.meta);
console.log(back.items.filter((x) => x.odd).length);
