// Long entries are not grouped into columns.
const a = [];
for (let i = 0; i < 8; i++) a.push("entry number " + i + " is long enough");
console.log(a);
