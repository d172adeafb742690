// A const arrow can call itself by name.
const walk = (node, depth) => {
  const pad = " ".repeat(depth * 2);
  const lines = [pad + node.name];
  for (const c of node.children ?? []) lines.push(walk(c, depth + 1));
  return lines.join("\n");
};
console.log(walk({ name: "root", children: [{ name: "a", children: [{ name: "a1" }] }, { name: "b" }] }, 0));
