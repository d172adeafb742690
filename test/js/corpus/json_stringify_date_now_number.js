// Date.now() is a number that JSON can carry (its value is not printed).
const t = Date.now();
console.log(typeof t, Number.isInteger(t), t > 1600000000000);
const text = JSON.stringify({ t });
console.log(JSON.parse(text).t === t);
