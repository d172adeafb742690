// Nested structures that break over several lines indent by two spaces per level.
const o = {
  name: "service",
  listeners: [{ address: "127.0.0.1", port: 8080 }, { address: "::1", port: 8443 }],
  pools: { main: { backends: ["10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80"], weight: 5 } },
};
console.log(o);
const deep = { level1: { level2: { a: "x".repeat(30), b: "y".repeat(30), c: 1 } } };
console.log(deep);
