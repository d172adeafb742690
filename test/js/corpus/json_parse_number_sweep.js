// JSON.parse of many number texts, printed back.
const texts = [];
for (let e = -330; e <= 310; e += 37) texts.push(`1.7976931348623157e${e}`, `4.9e${e}`, `-2e${e}`);
console.log(texts.map((t) => JSON.parse(t)).join(" "));
