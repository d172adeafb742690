// Calling functions stored in arrays and objects.
const handlers = {
  get: (req) => "GET " + req.path,
  post: (req) => "POST " + req.path,
};
const reqs = [{ method: "get", path: "/a" }, { method: "post", path: "/b" }];
for (const r of reqs) console.log(handlers[r.method](r));
const table = [(x) => x + 1, (x) => x * 10];
console.log(table[1](table[0](1)));
