"""A handler that changes a builtin (issue 25): `delete f.name` and `delete f.length` of a
builtin function, and replacing, adding and deleting builtin members (`Array.prototype.map =
f`, `delete Promise.all`), work as in node, and the change lasts until the end of the request that made
it, across its suspensions, and no further: the next request, and a request that runs while
it waits, see the module's builtins (docs/JS.md, "Builtins a script changes"). What the
module's top level changes is module state, which every request sees."""

import json
import socket

from test_handlers import get, run_load, write

HANDLER = """\
// The top level's changes are the module's: every request sees them.
delete Math.max.length;
Array.prototype.sum = function () { return this.reduce((a, b) => a + b, 0); };

function look() {
  return {
    mapHasName: Object.hasOwn(Array.prototype.map, "name"),
    mapName: Array.prototype.map.name,
    mapLengthDescriptor: Object.getOwnPropertyDescriptor(Array.prototype.map, "length") !== undefined,
    mapLength: Map.length,
    maxHasLength: Object.hasOwn(Math.max, "length"),
    sum: [1, 2, 3].sum(),
    mapped: [1].map((x) => x * 2)[0],
    extra: "extra" in [],
    promiseAll: typeof Promise.all,
  };
}

function replace() {
  Array.prototype.map = function () { return ["replaced"]; };
  Array.prototype.extra = 1;
  delete Promise.all;
}

export default async function handler(request) {
  if (request.path === "/delete") {
    delete Array.prototype.map.name;
    delete Array.prototype.map.length;
    delete Map.length;
    return Response.json(look());
  }
  if (request.path === "/replace") {
    replace();
    return Response.json(look());
  }
  if (request.path === "/delete-and-wait") {
    replace();
    delete Array.prototype.map.name;
    await new Promise((resolve) => setTimeout(resolve, 300));
    return Response.json(look());
  }
  return Response.json(look());
}
"""

# A deadline of 10 s: the test that suspends a request waits on a timer, which counts against
# the deadline (the default 50 ms is too near for a busy machine).
SITE = """\
.{
    .listen = "127.0.0.1:0",
    .handlers = .{ .app = .{ .file = "app.js", .deadline = "10s" } },
    .routes = .{ .{ .handler = "app" } },
}
"""


def start_handler(sluice, tmp_path):
    write(tmp_path, "app.js", HANDLER)
    return sluice.start_config(write(tmp_path, "site.zon", SITE))


ORIGINAL = {"mapHasName": True, "mapName": "map", "mapLengthDescriptor": True, "mapLength": 0,
            "maxHasLength": False, "sum": 6, "mapped": 2, "extra": False, "promiseAll": "function"}


def test_a_requests_change_to_a_builtin_does_not_reach_the_next_request(sluice, tmp_path):
    """Deleting a builtin function's name and length is seen by the request that did it, not
    by the next one on the same worker; the top level's deletion is seen by all."""
    start_handler(sluice, tmp_path)
    assert get(sluice.port, "/look").json() == ORIGINAL
    deleted = get(sluice.port, "/delete").json()
    assert deleted == dict(ORIGINAL, mapHasName=False, mapName="", mapLengthDescriptor=False)
    for _ in range(3):
        assert get(sluice.port, "/look").json() == ORIGINAL


def test_a_requests_replaced_added_and_deleted_members_stay_its_own(sluice, tmp_path):
    """A request that replaces Array.prototype.map, adds Array.prototype.extra and deletes
    Promise.all sees its changes; the next requests see the module's builtins, with the
    member the top level added."""
    start_handler(sluice, tmp_path)
    changed = get(sluice.port, "/replace").json()
    assert changed == dict(ORIGINAL, mapName="", mapped="replaced", extra=True, promiseAll="undefined")
    for _ in range(3):
        assert get(sluice.port, "/look").json() == ORIGINAL


def test_a_suspended_request_keeps_its_change_and_others_do_not_see_it(sluice, tmp_path):
    """A request that deletes a name and then waits on a timer still sees its change when it
    resumes, while a request served on the same worker during the wait does not."""
    start_handler(sluice, tmp_path)
    waiting = socket.create_connection(("127.0.0.1", sluice.port), timeout=10)
    try:
        waiting.sendall(b"GET /delete-and-wait HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        # Served while the first request waits on its timer (one worker).
        assert get(sluice.port, "/look").json() == ORIGINAL
        answer = b""
        while chunk := waiting.recv(65536):
            answer += chunk
    finally:
        waiting.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    assert json.loads(body)["mapHasName"] is False
    assert json.loads(body)["mapped"] == "replaced"
    assert get(sluice.port, "/look").json() == ORIGINAL


def test_changing_builtins_allocates_nothing_on_the_heap(sluice, tmp_path):
    """The changes live in the request's arena: thousands of requests that make them leave
    the heap allocation counter where it was."""
    start_handler(sluice, tmp_path)
    run_load(sluice.port, ["/delete", "/replace", "/look"], 200, (200,))
    before = sluice.stats()
    run_load(sluice.port, ["/delete", "/replace", "/look"], 2000, (200,))
    after = sluice.stats()
    assert after["heap_allocations_after_startup"] == before["heap_allocations_after_startup"]
    assert get(sluice.port, "/look").json() == ORIGINAL
