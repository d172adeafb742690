// Circular references print as [Circular *1].
const o = { name: "o" };
o.self = o;
console.log(o);
const a = [1];
a.push(a);
console.log(a);
const p = { child: { parent: null } };
p.child.parent = p;
console.log(p);
