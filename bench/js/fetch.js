// bench/js/app.js on Bun's and Deno's own servers (Bun.serve, Deno.serve), which take a
// fetch-style handler: the same three branches, the same bytes.
// Usage: bun fetch.js PORT | deno run --allow-net fetch.js PORT
function handle(req) {
  const url = new URL(req.url);
  if (url.pathname === "/api/hello") {
    return Response.json({
      hello: url.searchParams.get("name") ?? "world",
      via: req.headers.get("user-agent") ?? undefined,
    });
  }
  if (!req.headers.get("authorization")) return new Response("login first\n", { status: 401 });
  return new Response("ok\n");
}

const port = Number(typeof Deno !== "undefined" ? Deno.args[0] : process.argv[2]);
if (typeof Deno !== "undefined") {
  Deno.serve({ port, hostname: "127.0.0.1", onListen() {} }, handle);
} else {
  Bun.serve({ port, hostname: "127.0.0.1", fetch: handle });
}
