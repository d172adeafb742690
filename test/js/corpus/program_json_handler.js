// A request handler shape: read fields, build an object, stringify it.
const handle = (req) => {
  const { method, path, query = {}, headers = {} } = req;
  const user = query.user ?? "anonymous";
  const accept = headers["accept"] ?? "*/*";
  const status = method === "GET" ? 200 : 405;
  return JSON.stringify({ status, path, user, accept, len: path.length });
};
console.log(handle({ method: "GET", path: "/users", query: { user: "ann" } }));
console.log(handle({ method: "POST", path: "/", headers: { accept: "text/plain" } }));
