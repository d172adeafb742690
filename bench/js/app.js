// The handler of issue 13, as sluice runs it (bench/js.sh measures its JSON branch).
export default function handler(request) {
  const { method, path, query, headers } = request;
  if (path === "/api/hello") {
    return Response.json({ hello: query.name ?? "world", via: headers["user-agent"] });
  }
  if (!headers["authorization"]) return Response.text("login first\n", { status: 401 });
  return Response.text("ok\n");
}
