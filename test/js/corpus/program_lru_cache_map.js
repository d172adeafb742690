// An LRU cache using Map insertion order.
const lru = (limit) => {
  const m = new Map();
  return {
    get: (k) => {
      if (!m.has(k)) return undefined;
      const v = m.get(k);
      m.delete(k);
      m.set(k, v);
      return v;
    },
    put: (k, v) => {
      m.delete(k);
      m.set(k, v);
      if (m.size > limit) m.delete([...m.keys()][0]);
    },
    keys: () => [...m.keys()],
  };
};
const c = lru(3);
c.put("a", 1);
c.put("b", 2);
c.put("c", 3);
c.get("a");
c.put("d", 4);
console.log(c.keys(), c.get("b"), c.get("a"));
