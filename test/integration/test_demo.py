"""`sluice demo`: a self-contained proxy with two built-in backends."""

from client import request


def test_demo_round_robins_between_two_backends(sluice):
    """`sluice demo --listen 127.0.0.1:0` listens, announces its two demo backends, and
    four GETs of / alternate between "backend 1" and "backend 2"; SIGTERM exits 0."""
    sluice.start(demo=True)
    for n in ("1", "2"):
        sluice.wait_for_line(rf"^sluice: demo backend {n} on 127\.0\.0\.1:\d+", 2.0)
    seen = []
    for _ in range(4):
        r = request(sluice.port, "GET", "/")
        assert r.status == 200, r
        text = r.body.decode("utf-8", "replace").lower()
        which = [n for n in ("1", "2") if f"backend {n}" in text]
        assert len(which) == 1, f"body names no single demo backend: {r.body!r}"
        seen.append(which[0])
    assert seen in (["1", "2", "1", "2"], ["2", "1", "2", "1"]), seen
    assert sluice.stop(timeout=5.0) == 0


def test_demo_answers_hello_with_its_javascript_handler(sluice):
    """`/hello` is the demo's JavaScript handler (src/demo/hello.js), no backend involved;
    the line that says what to try names it."""
    sluice.start(demo=True)
    sluice.wait_for_line(r"^sluice: demo: try .*/hello\?name=you`, answered by a JavaScript handler", 2.0)
    r = request(sluice.port, "GET", "/hello?name=ada")
    assert (r.status, r.body) == (200, b"hello, ada, from a JavaScript handler (you asked for /hello)\n"), r
    assert sluice.stop(timeout=5.0) == 0
