// app.js: the handler of README.md's "JavaScript handlers" (issue 13's example, with a
// text answer where Response.proxy will send the request on to a pool).
export default function handler(request) {
  const { method, path, query, headers } = request;
  if (path === "/api/hello") {
    return Response.json({ hello: query.name ?? "world", via: headers["user-agent"] });
  }
  if (!headers["authorization"]) return Response.text("login first\n", { status: 401 });
  return Response.text(`welcome: ${method} ${path}\n`, { headers: { "cache-control": "no-store" } });
}
