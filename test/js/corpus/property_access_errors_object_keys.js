// obj[key] on undefined or null with an object key: V8 shows the key without converting it,
// and leaves it out when it would be a bare [object ...].
const u = undefined;
for (const k of [new Map(), new Set(), new Error("m"), new TypeError("t"), [], [1], Math, JSON, Math.max, Map, { a: 1 }, [1].values(), { toString: 1 }, { valueOf: () => 1 }]) {
  try { u[k]; } catch (e) { console.log(e.message); }
}
const k = {};
try { u[k] += 1; } catch (e) { console.log(e.message); }
try { u[k]++; } catch (e) { console.log(e.message); }
try { u?.[k].x; console.log("short-circuit"); } catch (e) { console.log(e.message); }
try { const o = { n: null }; o.n[[1]] = 2; } catch (e) { console.log(e.message); }
try { const o = { n: null }; o.n[new Map()](); } catch (e) { console.log(e.message); }
try { const { [k]: v } = null; } catch (e) { console.log(e.message); }
