// Many short keys: grouped output is for arrays only, objects wrap one key per line.
const o = {};
for (let i = 0; i < 30; i++) o["k" + i] = i;
console.log(o);
