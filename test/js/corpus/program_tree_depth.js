// Tree depth and node count over nested objects.
const tree = { v: 1, kids: [{ v: 2, kids: [{ v: 4, kids: [] }] }, { v: 3, kids: [] }] };
const depth = (t) => 1 + t.kids.reduce((m, k) => Math.max(m, depth(k)), 0);
const count = (t) => 1 + t.kids.reduce((s, k) => s + count(k), 0);
const sum = (t) => t.v + t.kids.reduce((s, k) => s + sum(k), 0);
console.log(depth(tree), count(tree), sum(tree));
console.log(tree);
