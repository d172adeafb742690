"""HTTP/2 to backends and gRPC end to end (issue 22, part 3): a pool with
`--backend-protocol h2c` speaks HTTP/2 with prior knowledge to its backends, many tries as
streams on few connections.

Peers are gRPC's own (grpcio, installed by .ci/run): a real gRPC server as the pool's member,
the real gRPC client in front of sluice (h2c with prior knowledge, `--http2 on`). Methods are
registered generically, so messages are raw bytes and no generated code is needed. Every
test runs once per I/O backend.
"""

import re
import threading
import time
from concurrent import futures

import pytest

from backends import RefusingPort
from client import Client

grpc = pytest.importorskip("grpc")

H2C = ["--http2", "on", "--backend-protocol", "h2c"]


class Service:
    """test.Echo: Reverse (unary), Fail (an error status), Count (server streaming), Join
    (client streaming), Upper (bidirectional), Slow (sleeps; says whether it was cancelled),
    Deadline (answers with the time the client left it, as grpc-timeout brought it)."""

    def __init__(self):
        self.cancelled = threading.Event()
        self.peers = set()

    def reverse(self, request, context):
        self.peers.add(context.peer())
        return request[::-1]

    def fail(self, request, context):
        context.abort(grpc.StatusCode.PERMISSION_DENIED, "denied")

    def count(self, request, context):
        for i in range(int(request)):
            yield b"item%d" % i

    def join(self, requests, context):
        return b"+".join(requests)

    def upper(self, requests, context):
        for message in requests:
            yield message.upper()

    def slow(self, request, context):
        context.add_callback(self.cancelled.set)
        time.sleep(float(request))
        return b"late"

    def deadline(self, request, context):
        remaining = context.time_remaining()
        return b"none" if remaining is None else b"%.1f" % remaining


def serve(service, add_port):
    """A gRPC server for `service` on the port `add_port(server)` adds and returns; the
    service learns its address and port."""
    handler = grpc.method_handlers_generic_handler("test.Echo", {
        "Reverse": grpc.unary_unary_rpc_method_handler(service.reverse),
        "Fail": grpc.unary_unary_rpc_method_handler(service.fail),
        "Count": grpc.unary_stream_rpc_method_handler(service.count),
        "Join": grpc.stream_unary_rpc_method_handler(service.join),
        "Upper": grpc.stream_stream_rpc_method_handler(service.upper),
        "Slow": grpc.unary_unary_rpc_method_handler(service.slow),
        "Deadline": grpc.unary_unary_rpc_method_handler(service.deadline),
    })
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=64),
                         options=[("grpc.max_receive_message_length", 8 << 20),
                                  ("grpc.max_send_message_length", 8 << 20)])
    server.add_generic_rpc_handlers((handler,))
    port = add_port(server)
    server.start()
    service.address = f"127.0.0.1:{port}"
    service.port = port
    service.server = server
    return server


@pytest.fixture
def grpc_backend():
    service = Service()
    server = serve(service, lambda server: server.add_insecure_port("127.0.0.1:0"))
    yield service
    server.stop(grace=None)


def channel(sluice):
    return grpc.insecure_channel(f"127.0.0.1:{sluice.port}", options=[
        ("grpc.max_receive_message_length", 8 << 20), ("grpc.max_send_message_length", 8 << 20)])


def test_unary_and_streaming_calls_end_to_end(sluice, grpc_backend):
    sluice.start([grpc_backend.address], args=H2C)
    with channel(sluice) as ch:
        assert ch.unary_unary("/test.Echo/Reverse")(b"hello", timeout=10) == b"olleh"
        assert list(ch.unary_stream("/test.Echo/Count")(b"3", timeout=10)) == [b"item0", b"item1", b"item2"]
        assert ch.stream_unary("/test.Echo/Join")(iter([b"a", b"b", b"c"]), timeout=10) == b"a+b+c"
        assert list(ch.stream_stream("/test.Echo/Upper")(iter([b"x", b"yz"]), timeout=10)) == [b"X", b"YZ"]


def test_an_error_status_comes_from_the_backends_trailers(sluice, grpc_backend):
    sluice.start([grpc_backend.address], args=H2C)
    with channel(sluice) as ch:
        with pytest.raises(grpc.RpcError) as failed:
            ch.unary_unary("/test.Echo/Fail")(b"x", timeout=10)
    assert failed.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert failed.value.details() == "denied"


def test_large_messages_flow_both_ways_through_the_windows(sluice, grpc_backend):
    """4 MiB each way: many times every stream window on both sides, so each opens again only
    as its bytes are taken."""
    sluice.start([grpc_backend.address], args=H2C)
    payload = bytes(range(256)) * (4 << 12)
    with channel(sluice) as ch:
        assert ch.unary_unary("/test.Echo/Reverse")(payload, timeout=20) == payload[::-1]


def test_the_deadline_reaches_the_backend_and_a_late_call_is_cancelled_there(sluice, grpc_backend):
    """grpc-timeout passes as the field it is; when the client gives up (RST_STREAM), sluice
    resets the backend's stream, and the backend sees the call cancelled."""
    sluice.start([grpc_backend.address], args=H2C)
    with channel(sluice) as ch:
        left = float(ch.unary_unary("/test.Echo/Deadline")(b"", timeout=5))
        assert 3.0 < left <= 5.0, left
        with pytest.raises(grpc.RpcError) as late:
            ch.unary_unary("/test.Echo/Slow")(b"3", timeout=0.5)
        assert late.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert grpc_backend.cancelled.wait(5), "the backend never saw the call cancelled"


def backend_connections(port: int) -> int:
    """Established TCP connections accepted on `port` (/proc/net/tcp and tcp6: gRPC's
    server listens dual-stack)."""
    count = 0
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(path) as table:
            next(table)
            for line in table:
                fields = line.split()
                local, state = fields[1], fields[3]
                if state == "01" and int(local.rsplit(":", 1)[1], 16) == port:
                    count += 1
    return count


def test_many_calls_share_one_backend_connection(sluice, grpc_backend):
    """64 calls at once, each held 0.3 s by the backend, on two client connections: they run
    as streams on one connection to the member."""
    sluice.start([grpc_backend.address], args=H2C)
    results = []
    with channel(sluice) as a, channel(sluice) as b:
        def call(ch, i):
            results.append(ch.unary_unary("/test.Echo/Slow")(b"0.3", timeout=10))
        threads = [threading.Thread(target=call, args=(a if i % 2 else b, i)) for i in range(64)]
        for t in threads:
            t.start()
        seen = set()
        while any(t.is_alive() for t in threads):
            seen.add(backend_connections(grpc_backend.port))
            time.sleep(0.02)
        for t in threads:
            t.join()
    assert results == [b"late"] * 64
    assert max(seen) == 1, seen


def test_an_http11_client_reaches_a_grpc_backend(sluice, grpc_backend):
    """The request side's conversion from HTTP/1.1: a length-framed body, `TE: trailers`
    forwarded as `te: trailers`; the response comes back chunked with grpc-status in its
    trailer section."""
    sluice.start([grpc_backend.address], args=H2C)
    message = b"\x00" + (5).to_bytes(4, "big") + b"hello"
    with Client(sluice.port) as c:
        c.send(b"POST /test.Echo/Reverse HTTP/1.1\r\nHost: h\r\nContent-Type: application/grpc\r\n"
               b"TE: trailers\r\nContent-Length: %d\r\n\r\n" % len(message) + message)
        r = c.read_response()
    assert r.status == 200, r
    assert r.header("content-type") == "application/grpc"
    assert r.body == b"\x00" + (5).to_bytes(4, "big") + b"olleh"
    assert ("grpc-status", "0") in r.trailers, r.trailers


def test_a_member_that_refuses_is_retried_on_the_next(sluice, grpc_backend):
    """A shared connection that cannot be made fails the tries waiting on it as connect
    failures: each is retried on the next member."""
    down = RefusingPort()
    try:
        sluice.start([down.address, grpc_backend.address], args=H2C)
        with channel(sluice) as ch:
            for _ in range(4):
                assert ch.unary_unary("/test.Echo/Reverse")(b"abc", timeout=10) == b"cba"
        assert sluice.stop() == 0  # The failed connection's slot was freed: the drain ends.
    finally:
        down.release()


def test_a_backend_that_goes_away_fails_its_calls_cleanly_and_the_next_connection_serves(sluice, grpc_backend):
    """The member's server stops: the shared connection breaks and is freed; calls while it
    is down fail as UNAVAILABLE (sluice's 502/503), and the process still drains cleanly."""
    sluice.start([grpc_backend.address], args=H2C)
    with channel(sluice) as ch:
        assert ch.unary_unary("/test.Echo/Reverse")(b"ab", timeout=10) == b"ba"
        grpc_backend.server.stop(grace=None).wait()
        with pytest.raises(grpc.RpcError) as failed:
            ch.unary_unary("/test.Echo/Reverse")(b"ab", timeout=10)
        assert failed.value.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.INTERNAL), failed.value
    assert sluice.stop() == 0


def test_thousands_of_calls_allocate_nothing_and_a_drain_closes_the_shared_connection(sluice, grpc_backend):
    """2,000 calls (unary and streaming) on the worker's pools alone; SIGTERM then finds the
    shared connection idle, closes it, and exits cleanly."""
    sluice.start([grpc_backend.address], args=H2C, workers=2)
    with channel(sluice) as ch:
        reverse = ch.unary_unary("/test.Echo/Reverse")
        for i in range(1500):
            assert reverse(b"call %d" % i, timeout=10) == (b"call %d" % i)[::-1]
        for _ in range(100):
            assert list(ch.stream_stream("/test.Echo/Upper")(iter([b"a", b"b"] * 2), timeout=10)) == [b"A", b"B"] * 2
    assert sluice.stats()["heap_allocations_after_startup"] == 0
    assert backend_connections(grpc_backend.port) >= 1
    assert sluice.stop() == 0
    assert backend_connections(grpc_backend.port) == 0


def test_a_reload_that_rebuilds_the_pool_closes_its_idle_shared_connection(sluice, grpc_backend, tmp_path):
    """The retired pool's shared connection closes when idle (else the old generation, which it
    holds, could never be freed); the new pool opens its own; the process still exits cleanly."""
    config = tmp_path / "grpc.zon"
    site = """.{{
    .listen = "127.0.0.1:0",
    .http2 = .on,
    .pools = .{{ .grpc = .{{ .backends = .{{"{backend}"}}, .protocol = .h2c, .strategy = .{strategy} }} }},
}}
"""
    config.write_text(site.format(backend=grpc_backend.address, strategy="round_robin"))
    sluice.start_config(config)
    with channel(sluice) as ch:
        assert ch.unary_unary("/test.Echo/Reverse")(b"ab", timeout=10) == b"ba"
        assert backend_connections(grpc_backend.port) == 1
        config.write_text(site.format(backend=grpc_backend.address, strategy="least_conn"))
        mark = sluice.mark()
        sluice.signal(1)  # SIGHUP
        sluice.wait_for_line(re.compile(r"reloaded .*generation 2"), start=mark, timeout=5)
        deadline = time.monotonic() + 5
        while backend_connections(grpc_backend.port) != 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert backend_connections(grpc_backend.port) == 0
        assert ch.unary_unary("/test.Echo/Reverse")(b"cd", timeout=10) == b"dc"
        assert backend_connections(grpc_backend.port) == 1
    assert sluice.stop() == 0
