"""Typed arrays, TextEncoder/TextDecoder, crypto.getRandomValues and crypto.subtle.digest in a
request handler (issue 25 §5; docs/JS.md "Web APIs"), on both I/O backends: the digest goes
through the TLS library in a worker as in `sluice js run`, a module's Uint8Array is sealed
like any module state, a buffer past the handler's memory is the handler's own 500, and
thousands of calls allocate nothing on the heap."""

import hashlib

from client import request

HANDLER = """\
export default async function handler(request) {
  const { path } = request;
  if (path.startsWith("/sha256/")) {
    const bytes = new TextEncoder().encode(decodeURIComponent(path.slice(8)));
    const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    return Response.text([...hash].map((b) => b.toString(16).padStart(2, "0")).join(""));
  }
  if (path === "/bytes") {
    const u = Uint8Array.from([104, 195, 169, 300]);
    const random = crypto.getRandomValues(new Uint32Array(4));
    return Response.json({ text: new TextDecoder().decode(u.subarray(0, 3)), last: u[3], n: random.length, view: String(u.subarray(1, 3)) });
  }
  if (path === "/module-write") { TABLE[0] = 9; return Response.text(String(TABLE[0])); }
  if (path === "/module-read") return Response.text(TABLE.join("-"));
  if (path === "/huge") return Response.text(String(new Uint8Array(64 * 1024 * 1024).length));
  return new Response("not found", { status: 404 });
}
const TABLE = new Uint8Array([1, 2, 3]);
"""


def start(sluice, tmp_path, workers=1):
    path = tmp_path / "bytes.js"
    path.write_text(HANDLER)
    return sluice.start(args=["--handler-file", f"bytes={path}", "--handler", "bytes",
                              "--workers", str(workers)])


def get(port, target):
    return request(port, "GET", target, timeout=10)


def test_digest_and_text_encoding_in_a_handler_match_python(sluice, tmp_path):
    """SHA-256 of the UTF-8 of a path (non-ASCII included) is hashlib's; TextDecoder, the
    Uint8Array conversions and getRandomValues answer as in `sluice js run`."""
    start(sluice, tmp_path)
    for text in ["hello", "caf\u00e9 \u4e2d \U0001f600", ""]:
        target = "/sha256/" + "".join(f"%{b:02X}" for b in text.encode())
        r = get(sluice.port, target)
        assert (r.status, r.body.decode()) == (200, hashlib.sha256(text.encode()).hexdigest()), r
    r = get(sluice.port, "/bytes")
    assert (r.status, r.body) == (200, b'{"text":"h\xc3\xa9","last":44,"n":4,"view":"195,169"}'), r


def test_module_typed_array_is_read_only_in_requests_and_memory_is_bounded(sluice, tmp_path):
    """A module's Uint8Array reads in a request but refuses a write (module state), and a
    64 MiB buffer is past the handler's memory: both are 500s, and the worker serves on."""
    start(sluice, tmp_path)
    assert get(sluice.port, "/module-read").body == b"1-2-3"
    assert get(sluice.port, "/module-write").status == 500
    assert get(sluice.port, "/huge").status == 500
    assert get(sluice.port, "/module-read").body == b"1-2-3"


def test_no_heap_allocations_per_bytes_request(sluice, tmp_path):
    """After warm-up, 2,000 digest, encoding and random-value calls leave
    heap_allocations_after_startup unchanged."""
    start(sluice, tmp_path)
    targets = ["/sha256/abc", "/bytes", "/module-write", "/huge"]
    for _ in range(50):
        for t in targets:
            get(sluice.port, t)
    before = sluice.stats()
    for _ in range(500):
        for t in targets:
            get(sluice.port, t)
    after = sluice.stats()
    key = "heap_allocations_after_startup"
    assert after[key] == before[key], (before, after)
