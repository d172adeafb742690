"""HTTP/2 over TLS to backends (issue 22, part 3): a pool with `.protocol = .h2` speaks HTTP/2
to its members over TLS agreed by ALPN, many tries as streams on few connections.

The member is grpcio's server with TLS (`add_secure_port`), the client grpcio's (h2c with
prior knowledge to sluice, `--http2 on`): gRPC end to end with TLS on the backend hop. Every
test runs once per I/O backend.
"""

import socket
import ssl
import subprocess
import threading

import pytest

from client import Client
from test_backend_tls import make_pki
from test_grpc import Service, backend_connections, channel, serve
from conftest import ZonEnum, write_zon

grpc = pytest.importorskip("grpc")


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"))


def read(path):
    with open(path, "rb") as f:
        return f.read()


@pytest.fixture
def grpc_tls_backend(pki):
    service = Service()
    cert, key = pki["server"]
    credentials = grpc.ssl_server_credentials([(read(key), read(cert))])
    server = serve(service, lambda server: server.add_secure_port("127.0.0.1:0", credentials))
    yield service
    server.stop(grace=None)


def start_h2_pool(sluice, tmp_path, backends, tls, **extra):
    pool = {"backends": backends, "protocol": ZonEnum("h2"), "tls": tls}
    pool.update(extra)
    path = write_zon(tmp_path / "h2.zon", {"listen": "127.0.0.1:0", "http2": ZonEnum("on"), "pools": {"grpc": pool}})
    return sluice.start_config(path)


def test_grpc_calls_over_tls_to_the_backend(sluice, grpc_tls_backend, pki, tmp_path):
    start_h2_pool(sluice, tmp_path, [grpc_tls_backend.address], {"ca": pki["ca"]})
    payload = bytes(range(256)) * (1 << 12)  # 1 MiB: many records and windows each way.
    with channel(sluice) as ch:
        assert ch.unary_unary("/test.Echo/Reverse")(b"hello", timeout=10) == b"olleh"
        assert list(ch.unary_stream("/test.Echo/Count")(b"3", timeout=10)) == [b"item0", b"item1", b"item2"]
        assert list(ch.stream_stream("/test.Echo/Upper")(iter([b"x", b"yz"]), timeout=10)) == [b"X", b"YZ"]
        assert ch.unary_unary("/test.Echo/Reverse")(payload, timeout=20) == payload[::-1]
        with pytest.raises(grpc.RpcError) as failed:
            ch.unary_unary("/test.Echo/Fail")(b"x", timeout=10)
    assert failed.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_many_calls_share_one_tls_connection(sluice, grpc_tls_backend, pki, tmp_path):
    """64 calls in flight from one worker: one TLS connection to the member carries them."""
    start_h2_pool(sluice, tmp_path, [grpc_tls_backend.address], {"ca": pki["ca"]})
    with channel(sluice) as ch:
        method = ch.unary_unary("/test.Echo/Reverse")
        calls = [method.future(b"call%d" % i, timeout=20) for i in range(64)]
        assert [c.result() for c in calls] == [(b"call%d" % i)[::-1] for i in range(64)]
        assert backend_connections(grpc_tls_backend.port) == 1


def test_a_backend_whose_certificate_fails_gets_no_call(sluice, grpc_tls_backend, pki, tmp_path):
    """Verification against a CA that did not sign the member's certificate: the call fails
    (UNAVAILABLE, from a 502), and the log says why in AWS-LC's words."""
    start_h2_pool(sluice, tmp_path, [grpc_tls_backend.address], {"ca": pki["client_ca"]})
    with channel(sluice) as ch:
        with pytest.raises(grpc.RpcError) as failed:
            ch.unary_unary("/test.Echo/Reverse")(b"x", timeout=10)
    assert failed.value.code() == grpc.StatusCode.UNAVAILABLE
    line = sluice.wait_for_line(r"TLS with backend 127\.0\.0\.1:\d+ of pool grpc failed in the handshake", timeout=5)
    assert "certificate verify failed" in line.string, line.string


def test_a_backend_that_does_not_agree_to_h2_fails_the_connect_with_the_reason(sluice, pki, tmp_path):
    """A TLS backend that speaks only HTTP/1.1 (its ALPN offers no h2): no preface is sent to
    it, the request is a 502, and the warning says what ALPN chose."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(*pki["server"])
    ctx.set_alpn_protocols(["http/1.1"])
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    received = []

    def serve():
        while True:
            try:
                raw, _ = listener.accept()
            except OSError:
                return
            try:
                with ctx.wrap_socket(raw, server_side=True) as conn:
                    conn.settimeout(2)
                    received.append(conn.recv(100))
            except (OSError, ssl.SSLError):
                received.append(b"<handshake failed>")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        start_h2_pool(sluice, tmp_path, [f"127.0.0.1:{listener.getsockname()[1]}"], {"ca": pki["ca"]})
        c = Client(sluice.port)
        try:
            r = c.request("GET", "/")
        finally:
            c.close()
        assert r.status == 502, r.status
        assert b"TLS handshake with the backend failed" in r.body
        line = sluice.wait_for_line(r"failed to agree on HTTP/2", timeout=5)
        assert "chose no protocol by ALPN" in line.string, line.string
        assert not any(b"PRI * HTTP/2.0" in data for data in received), received
    finally:
        listener.close()


@pytest.mark.parametrize("case", ["no_tls", "h2c_with_tls"])
def test_check_refuses_h2_without_tls_and_h2c_with_it(sluice_bin, tmp_path, case):
    pool = {"backends": ["127.0.0.1:1"], "protocol": ZonEnum("h2")} if case == "no_tls" else \
        {"backends": ["127.0.0.1:1"], "protocol": ZonEnum("h2c"), "tls": {}}
    path = write_zon(tmp_path / "bad.zon", {"listen": "127.0.0.1:0", "pools": {"grpc": pool}})
    done = subprocess.run([sluice_bin, "check", str(path)], capture_output=True, text=True, timeout=10)
    assert done.returncode != 0
    said = done.stderr + done.stdout
    if case == "no_tls":
        assert "protocol h2 is HTTP/2 over TLS" in said, said
    else:
        assert "for HTTP/2 over TLS use protocol h2" in said, said


def test_calls_over_tls_allocate_nothing_and_a_drain_closes_the_connection(sluice, grpc_tls_backend, pki, tmp_path):
    """1,000 calls on the worker's pools alone (TLS memory included: AWS-LC's comes from the
    worker's bounded pool); SIGTERM then closes the idle TLS connection (close_notify first)
    and exits cleanly."""
    start_h2_pool(sluice, tmp_path, [grpc_tls_backend.address], {"ca": pki["ca"]})
    with channel(sluice) as ch:
        reverse = ch.unary_unary("/test.Echo/Reverse")
        for i in range(900):
            assert reverse(b"call %d" % i, timeout=10) == (b"call %d" % i)[::-1]
        for _ in range(100):
            assert list(ch.stream_stream("/test.Echo/Upper")(iter([b"a", b"b"]), timeout=10)) == [b"A", b"B"]
    assert sluice.stats()["heap_allocations_after_startup"] == 0
    assert backend_connections(grpc_tls_backend.port) == 1
    assert sluice.stop() == 0
    assert backend_connections(grpc_tls_backend.port) == 0
