// bench/js/app.js on node's own `http` server: the same three branches, the same bytes.
// Usage: node node.mjs PORT
import http from "node:http";

// Content-Length set as the others do (node would chunk the body otherwise).
function send(res, status, type, body) {
  res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body) });
  res.end(body);
}

function handle(req, res) {
  const url = new URL(req.url, "http://x");
  if (url.pathname === "/api/hello") {
    const body = JSON.stringify({
      hello: url.searchParams.get("name") ?? "world",
      via: req.headers["user-agent"],
    });
    return send(res, 200, "application/json", body);
  }
  if (!req.headers["authorization"]) {
    return send(res, 401, "text/plain;charset=UTF-8", "login first\n");
  }
  send(res, 200, "text/plain;charset=UTF-8", "ok\n");
}

http.createServer(handle).listen(Number(process.argv[2]), "127.0.0.1");
