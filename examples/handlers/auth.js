// auth.js: an auth sub-request in front of an app (README.md, "fetch to pools"). The auth
// pool says who the caller is; the app pool answers, and its response goes back with headers
// of the edge's own.
export default async function edge(request) {
  const auth = await fetch("http://auth/verify", {
    headers: { authorization: request.headers.authorization ?? "" },
  });
  if (auth.status !== 200) return Response.json({ error: "unauthorized" }, { status: 401 });
  const { user } = await auth.json();
  const query = request.target.indexOf("?");
  // `request.body` is null when sluice did not read the body before the call (chunked, or
  // larger than its buffer): reading it is then the handler's call.
  const body = request.body ?? (await request.text());
  const app = await fetch("http://app" + request.path + (query < 0 ? "" : request.target.slice(query)), {
    method: request.method,
    headers: { "x-user": user },
    body: body === "" ? null : body,
  });
  const headers = new Headers(app.headers);
  headers.set("x-user", user);
  headers.set("cache-control", "private, no-store");
  headers.delete("server");
  return new Response(app.body, { status: app.status, headers });
}
