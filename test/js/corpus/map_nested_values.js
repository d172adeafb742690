// Maps holding arrays and Maps.
const m = new Map();
m.set("list", []);
m.get("list").push(1, 2);
m.set("inner", new Map([["k", "v"]]));
console.log(m);
console.log(m.get("inner").get("k"));
