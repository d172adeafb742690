// JSON.stringify of every ASCII character and some surrogates.
const out = [];
for (let c = 0; c < 128; c++) out.push(JSON.stringify(String.fromCharCode(c)));
console.log(out.join(" "));
const sur = [0xd7ff, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xe000, 0xfffd, 0xffff];
console.log(sur.map((c) => JSON.stringify(String.fromCharCode(c))).join(" "));
