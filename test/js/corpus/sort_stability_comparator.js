// sort is stable: equal keys keep their input order.
const rows = [];
for (let i = 0; i < 40; i++) {
  rows.push({ key: i % 3, id: i });
}
rows.sort((a, b) => a.key - b.key);
console.log(rows.map((r) => r.key + ":" + r.id).join(" "));
