// Building a multi-line report with join and padding.
const rows = [["apple", 3], ["kiwi", 12], ["banana", 7]];
const lines = rows.map(([name, count]) => name.padEnd(8, ".") + String(count).padStart(4));
console.log(lines.join("\n"));
console.log(lines.length);
