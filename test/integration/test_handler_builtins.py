"""A handler that changes a builtin (issue 25): `delete f.name` and `delete f.length` of a
builtin function work as in node, and the change lasts until the end of the request that made
it, across its suspensions, and no further: the next request, and a request that runs while
it waits, see the module's builtins (docs/JS.md, "Builtins a script changes"). What the
module's top level changes is module state, which every request sees."""

import json
import socket

from test_handlers import get, run_load, write

HANDLER = """\
// The top level's change is the module's: every request sees it.
delete Math.max.length;

function look() {
  return {
    mapHasName: Object.hasOwn(Array.prototype.map, "name"),
    mapName: Array.prototype.map.name,
    mapLengthDescriptor: Object.getOwnPropertyDescriptor(Array.prototype.map, "length") !== undefined,
    mapLength: Map.length,
    maxHasLength: Object.hasOwn(Math.max, "length"),
  };
}

export default async function handler(request) {
  if (request.path === "/delete") {
    delete Array.prototype.map.name;
    delete Array.prototype.map.length;
    delete Map.length;
    return Response.json(look());
  }
  if (request.path === "/delete-and-wait") {
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
            "maxHasLength": False}


def test_a_requests_change_to_a_builtin_does_not_reach_the_next_request(sluice, tmp_path):
    """Deleting a builtin function's name and length is seen by the request that did it, not
    by the next one on the same worker; the top level's deletion is seen by all."""
    start_handler(sluice, tmp_path)
    assert get(sluice.port, "/look").json() == ORIGINAL
    deleted = get(sluice.port, "/delete").json()
    assert deleted == {"mapHasName": False, "mapName": "", "mapLengthDescriptor": False,
                       "mapLength": 0, "maxHasLength": False}
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
    assert get(sluice.port, "/look").json() == ORIGINAL


def test_changing_builtins_allocates_nothing_on_the_heap(sluice, tmp_path):
    """The changes live in the request's arena: thousands of requests that make them leave
    the heap allocation counter where it was."""
    start_handler(sluice, tmp_path)
    run_load(sluice.port, ["/delete", "/look"], 200, (200,))
    before = sluice.stats()
    run_load(sluice.port, ["/delete", "/look"], 2000, (200,))
    after = sluice.stats()
    assert after["heap_allocations_after_startup"] == before["heap_allocations_after_startup"]
    assert get(sluice.port, "/look").json() == ORIGINAL
