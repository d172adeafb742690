"""Async generators and `for await` in JavaScript handlers (issue 25; docs/JS.md, "Promises and
the microtask queue"): a handler that awaits a fetch or a timer inside an async generator,
or inside `for await`, suspends and resumes as any async handler does, and its generators,
request queues and promises live in the run's heap (no heap allocation per request). Real
backends, both I/O backends."""

import threading

from client import request
from test_admin import ADMIN_RE

HANDLER = r"""
const sleep = (ms, value) => new Promise((resolve) => setTimeout(resolve, ms, value));

// Each page is a sub-request to the pool; the generator suspends the handler on each fetch.
async function* pages(n) {
  for (let i = 1; i <= n; i++) {
    const r = await fetch(`http://app/page${i}`);
    const echoed = await r.json();
    yield echoed.target;
  }
  return "end";
}

async function* ticks(n) {
  for (let i = 0; i < n; i++) yield sleep(2, `t${i}`);
}

export default async function handler(request) {
  if (request.path === "/pages") {
    const seen = [];
    for await (const target of pages(Number(request.query.n ?? "2"))) seen.push(target);
    return Response.json({ seen });
  }
  if (request.path === "/ticks") {
    const seen = [];
    for await (const t of ticks(3)) seen.push(t);
    for await (const v of [sleep(1, "a"), "b"]) seen.push(v);
    return Response.text(seen.join(","));
  }
  if (request.path === "/early") {
    const g = pages(5);
    let first;
    for await (const target of g) {
      first = target;
      break;
    }
    const after = await g.next();
    return Response.json({ first, after });
  }
  if (request.path === "/queued") {
    const g = ticks(2);
    const all = await Promise.all([g.next(), g.next(), g.next(), g.return("r")]);
    return Response.json(all);
  }
  return Response.text("sync");
}
"""

SITE = """\
.{
    .listen = "127.0.0.1:0",
    .admin = .{ .listen = "127.0.0.1:0" },
    .handlers = .{ .edge = .{ .file = "edge.js", .deadline = "2s", .fetch_max = 2 } },
    .pools = .{ .app = .{ .backends = .{"APP"} } },
    .routes = .{ .{ .handler = "edge" } },
}
"""


def start(sluice, make_backend, tmp_path, workers=1):
    app = make_backend(name="app1")
    (tmp_path / "edge.js").write_text(HANDLER)
    config = tmp_path / "site.zon"
    config.write_text(SITE.replace("APP", app.address))
    sluice.start_config(config, workers=workers)
    sluice.wait_for_line(ADMIN_RE, timeout=5.0)
    return app


def test_for_await_over_an_async_generator_that_fetches(sluice, make_backend, tmp_path):
    """Each page is fetched in turn from inside the generator, and the loop sees them in order."""
    app = start(sluice, make_backend, tmp_path)
    r = request(sluice.port, "GET", "/pages?n=3")
    assert r.status == 200, r
    assert r.json() == {"seen": ["/page1", "/page2", "/page3"]}
    assert [q.target for q in app.requests[-3:]] == ["/page1", "/page2", "/page3"]


def test_timers_inside_async_generators_and_for_await(sluice, make_backend, tmp_path):
    start(sluice, make_backend, tmp_path)
    r = request(sluice.port, "GET", "/ticks")
    assert r.status == 200, r
    assert r.body == b"t0,t1,t2,a,b"


def test_break_closes_the_generator_and_queued_requests_answer_in_order(sluice, make_backend, tmp_path):
    """`break` returns the generator (no second fetch), and next() after it is done; requests
    queued while the generator waits on a timer settle in the order they were made."""
    app = start(sluice, make_backend, tmp_path)
    before = len(app.requests)
    r = request(sluice.port, "GET", "/early")
    assert r.status == 200, r
    assert r.json() == {"first": "/page1", "after": {"done": True}}
    assert len(app.requests) == before + 1
    r = request(sluice.port, "GET", "/queued")
    assert r.status == 200, r
    assert r.json() == [{"value": "t0", "done": False}, {"value": "t1", "done": False},
                        {"done": True}, {"value": "r", "done": True}]


def test_no_heap_allocations_per_request_with_async_iteration(sluice, make_backend, tmp_path):
    """Handlers that iterate async generators over fetches and timers leave
    heap_allocations_after_startup unchanged, on two workers."""
    start(sluice, make_backend, tmp_path, workers=2)
    targets = ["/pages?n=2", "/ticks", "/early", "/queued", "/"]

    def load(rounds):
        errors = []

        def worker(offset):
            for i in range(rounds):
                target = targets[(i + offset) % len(targets)]
                r = request(sluice.port, "GET", target, timeout=10)
                if r.status != 200:
                    errors.append((target, r.status))

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors, errors[:3]

    load(15)
    before = sluice.stats()
    load(40)
    after = sluice.stats()
    key = "heap_allocations_after_startup"
    assert after[key] == before[key], (before, after)
