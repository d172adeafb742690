// A request router with path parameters, middleware closures and JSON responses.
const routes = [];
const route = (method, pattern, handler) => {
  const parts = pattern.split("/").filter((p) => p !== "");
  routes.push({ method, pattern, parts, handler });
};
const match = (parts, path) => {
  const segs = path.split("?")[0].split("/").filter((p) => p !== "");
  if (segs.length !== parts.length && !parts.includes("*")) return null;
  const params = {};
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    if (p === "*") { params.rest = segs.slice(i).join("/"); return params; }
    if (p.startsWith(":")) params[p.slice(1)] = decodeURIComponent(segs[i] ?? "");
    else if (p !== segs[i]) return null;
  }
  return params;
};
const parseQuery = (path) => {
  const q = path.includes("?") ? path.slice(path.indexOf("?") + 1) : "";
  const out = {};
  for (const pair of q.split("&")) {
    if (pair === "") continue;
    const [k, v = ""] = pair.split("=");
    const key = decodeURIComponent(k);
    const value = decodeURIComponent(v.replaceAll("+", " "));
    if (key in out) out[key] = [].concat(out[key], value);
    else out[key] = value;
  }
  return out;
};
const json = (status, body) => ({ status, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const users = new Map([["1", { id: 1, name: "Ada" }], ["2", { id: 2, name: "Linus" }]]);
route("GET", "/users", (req) => json(200, [...users.values()].filter((u) => !req.query.name || u.name.toLowerCase().includes(req.query.name))));
route("GET", "/users/:id", (req) => {
  const u = users.get(req.params.id);
  return u ? json(200, u) : json(404, { error: `no user ${req.params.id}` });
});
route("POST", "/users", (req) => {
  const body = JSON.parse(req.body);
  if (typeof body.name !== "string" || body.name.trim() === "") throw new TypeError("name must be a non-empty string");
  const id = String(users.size + 1);
  users.set(id, { id: Number(id), name: body.name.trim() });
  return json(201, users.get(id));
});
route("GET", "/files/*", (req) => json(200, { path: req.params.rest }));
const log = [];
const withLogging = (handler) => (req) => {
  const res = handler(req);
  log.push(`${req.method} ${req.path} -> ${res.status}`);
  return res;
};
const withErrors = (handler) => (req) => {
  try { return handler(req); } catch (e) {
    return json(e instanceof SyntaxError ? 400 : e instanceof TypeError ? 422 : 500, { error: e.message, kind: e.name });
  }
};
const dispatch = withLogging(withErrors((req) => {
  for (const r of routes) {
    if (r.method !== req.method) continue;
    const params = match(r.parts, req.path);
    if (params) return r.handler({ ...req, params, query: parseQuery(req.path) });
  }
  return json(404, { error: "not found", path: req.path });
}));
const requests = [
  { method: "GET", path: "/users" },
  { method: "GET", path: "/users?name=ad" },
  { method: "GET", path: "/users/2" },
  { method: "GET", path: "/users/9" },
  { method: "POST", path: "/users", body: '{"name": "  Grace "}' },
  { method: "POST", path: "/users", body: '{"name": ""}' },
  { method: "POST", path: "/users", body: "{bad json" },
  { method: "GET", path: "/files/a/b%20c/d.txt" },
  { method: "GET", path: "/users/caf%C3%A9?x=1&x=2&y=a+b" },
  { method: "DELETE", path: "/users/1" },
];
for (const req of requests) {
  const res = dispatch(req);
  console.log(res.status, res.body);
}
console.log(log);
console.log(parseQuery("/p?a=1&b=%E2%82%AC&a=3&empty=&flag"));
console.log(users);
