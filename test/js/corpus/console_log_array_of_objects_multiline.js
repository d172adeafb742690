// An array of objects that does not fit on one line.
const rows = [];
for (let i = 0; i < 5; i++) rows.push({ id: i, name: "name" + i, active: i % 2 === 0 });
console.log(rows);
