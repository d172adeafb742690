// An array of records, as a handler would answer.
const rows = [];
for (let i = 0; i < 3; i++) rows.push({ id: i, name: `item${i}`, ok: i % 2 === 0 });
console.log(JSON.stringify({ count: rows.length, rows }));
console.log(JSON.stringify({ count: rows.length, rows }, null, 2));
