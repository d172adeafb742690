// Rendering a text table with padding.
const rows = [["name", "qty", "price"], ["apple", 3, 1.5], ["watermelon", 1, 3.25], ["fig", 12, 0.4]];
const widths = rows[0].map((_, c) => rows.reduce((w, r) => Math.max(w, String(r[c]).length), 0));
for (const r of rows) {
  console.log(r.map((cell, c) => (typeof cell === "number" ? String(cell).padStart(widths[c]) : String(cell).padEnd(widths[c]))).join(" | "));
}
