// Objects whose values are long arrays.
const o = { evens: [], odds: [] };
for (let i = 0; i < 30; i++) (i % 2 === 0 ? o.evens : o.odds).push(i);
console.log(o);
