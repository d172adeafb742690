// Nested objects read and updated through paths.
const cfg = { server: { port: 80, hosts: ["a", "b"] }, debug: false };
console.log(cfg.server.port, cfg.server.hosts[1], cfg["server"]["hosts"].length);
cfg.server.port += 8000;
cfg.server.hosts.push("c");
cfg.extra = { deep: { deeper: { deepest: 1 } } };
console.log(cfg);
console.log(cfg.extra.deep.deeper.deepest);
