"""HTTPS on listeners (`--tls-cert`, `--tls-key`), with real clients: Python's ssl and curl.

The certificates are src/tls/testdata/'s (made by its generate.sh for 100 years): ecdsa.pem is
a leaf for `ecdsa.test` and `*.wild.test` with its intermediate, signed by ca.pem; rsa.pem the
same for `rsa.test`. Every test runs once per I/O backend.
"""

import shutil
import socket
import ssl
import subprocess
import time

import pytest

from backends import close_delimited, upgrade
from client import BufferedSocket, Client, Echoed, build_request
from conftest import REPO
from test_admin import admin, start_with_admin

TESTDATA = REPO / "src" / "tls" / "testdata"
CA = str(TESTDATA / "ca.pem")


def tls_args(name="ecdsa"):
    return ["--tls-cert", str(TESTDATA / f"{name}.pem"), "--tls-key", str(TESTDATA / f"{name}.key")]


def client_context(**kw):
    ctx = ssl.create_default_context(cafile=CA)
    ctx.set_alpn_protocols(["http/1.1"])
    for key, value in kw.items():
        setattr(ctx, key, value)
    return ctx


def tls_client(port, ctx=None, server_name="ecdsa.test", session=None, timeout=10.0,
               suppress_ragged_eofs=True):
    """A `Client` whose socket speaks TLS (the handshake done, verified against ca.pem)."""
    c = Client(port, timeout=timeout)
    c.sock = (ctx or client_context()).wrap_socket(c.sock, server_hostname=server_name,
                                                   session=session,
                                                   suppress_ragged_eofs=suppress_ragged_eofs)
    c.bsock = BufferedSocket(c.sock)
    return c


def test_https_requests_keep_alive_pipelined_with_bodies_and_forwarded_proto(sluice, backend):
    """Requests over one TLS connection (TLS 1.3, ALPN http/1.1): GETs, a 200 KB POST, and
    five pipelined in one write; the backend sees `X-Forwarded-Proto: https`."""
    sluice.start([backend], args=tls_args())
    c = tls_client(sluice.port)
    try:
        assert c.sock.version() == "TLSv1.3"
        assert c.sock.selected_alpn_protocol() == "http/1.1"
        for i in range(10):
            e = Echoed(c.request("GET", f"/get/{i}"))
            assert e.target == f"/get/{i}"
            assert e.header("X-Forwarded-Proto") == "https"
        body = bytes(range(256)) * 800
        e = Echoed(c.request("POST", "/post", body=body))
        assert e.body_len == len(body)
        targets = [f"/pipe/{i}" for i in range(5)]
        c.send(b"".join(build_request("GET", t) for t in targets))
        assert [Echoed(c.read_response()).target for _ in targets] == targets
    finally:
        c.close()


@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3])
@pytest.mark.parametrize("name", ["ecdsa", "rsa"])
def test_https_with_ecdsa_and_rsa_over_tls_1_2_and_1_3(sluice, backend, name, version):
    """Each key type, each protocol version, a request answered."""
    sluice.start([backend], args=tls_args(name))
    ctx = client_context(maximum_version=version)
    c = tls_client(sluice.port, ctx, server_name=f"{name}.test")
    try:
        assert c.sock.version() == {ssl.TLSVersion.TLSv1_2: "TLSv1.2",
                                    ssl.TLSVersion.TLSv1_3: "TLSv1.3"}[version]
        assert Echoed(c.request("GET", "/x")).target == "/x"
    finally:
        c.close()


def test_session_tickets_resume(sluice, backend):
    """A second connection resumes the first one's session with its ticket."""
    sluice.start([backend], args=tls_args())
    ctx = client_context()
    first = tls_client(sluice.port, ctx)
    try:
        Echoed(first.request("GET", "/first"))  # TLS 1.3 tickets arrive after the handshake
        session = first.sock.session
    finally:
        first.close()
    second = tls_client(sluice.port, ctx, session=session)
    try:
        assert second.sock.session_reused
        assert Echoed(second.request("GET", "/second")).target == "/second"
    finally:
        second.close()


def test_plain_http_on_a_tls_port_gets_a_400(sluice, backend):
    """A plain HTTP request gets a clear 400 in plain text, as nginx sends, and nothing
    reaches the backend."""
    sluice.start([backend], args=tls_args())
    c = Client(sluice.port)
    try:
        r = c.request("GET", "/plain")
        assert r.status == 400
        assert b"plain HTTP request was sent to HTTPS port" in r.body
        assert c.wait_closed(3.0)
    finally:
        c.close()
    assert backend.requests == []


def test_garbage_instead_of_a_client_hello_is_closed(sluice, backend):
    """Bytes that are not TLS end the connection; sluice carries on serving."""
    sluice.start([backend], args=tls_args())
    sock = socket.create_connection(("127.0.0.1", sluice.port), timeout=5)
    try:
        sock.sendall(b"\x00\x01\x02\x03 this is not TLS\r\n\r\n")
        sock.settimeout(3)
        data = b""
        while True:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
        assert not data.startswith(b"HTTP/")
    finally:
        sock.close()
    c = tls_client(sluice.port)
    try:
        assert Echoed(c.request("GET", "/after")).target == "/after"
    finally:
        c.close()


def test_a_handshake_that_never_finishes_is_closed_at_the_head_deadline(sluice, backend):
    """A client that connects and sends nothing, or half a ClientHello, is closed when the
    client header timeout passes: the handshake counts as head time."""
    admin_port = start_with_admin(sluice, [backend], args=[*tls_args(), "--client-header-timeout", "300ms"])
    for opening in (b"", b"\x16\x03\x01\x00\x30"):
        sock = socket.create_connection(("127.0.0.1", sluice.port), timeout=5)
        try:
            sock.sendall(opening)
            started = time.monotonic()
            sock.settimeout(5)
            assert sock.recv(4096) == b""
            assert time.monotonic() - started < 3
        finally:
            sock.close()
    metrics = admin(admin_port, "/metrics").body.decode()
    assert "sluice_client_timeouts_total 2\n" in metrics, metrics
    assert "sluice_tls_handshakes_failed_total 2\n" in metrics, metrics


def test_curl_gets_an_answer_over_https(sluice, backend):
    """curl, verifying the chain against ca.pem and the name, gets the backend's answer."""
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("curl is not installed")
    sluice.start([backend], args=tls_args())
    out = subprocess.run(
        [curl, "-sS", "--http1.1", "--cacert", CA, "--resolve", f"ecdsa.test:{sluice.port}:127.0.0.1",
         "-o", "/dev/null", "-w", "%{http_code} %{ssl_verify_result}",
         f"https://ecdsa.test:{sluice.port}/curl"],
        capture_output=True, text=True, timeout=20)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "200 0"


def test_no_heap_allocation_per_request_over_tls(sluice, backend):
    """After a warm-up, 300 requests over TLS (new connections with full and resumed
    handshakes, and keep-alive requests) leave heap_allocations_after_startup unchanged:
    AWS-LC allocates from the workers' pools."""
    sluice.start([backend], args=tls_args(), workers=2)
    ctx = client_context()

    def load(connections):
        session = None
        for i in range(connections):
            c = tls_client(sluice.port, ctx, session=session)
            try:
                for j in range(5):
                    Echoed(c.request("GET", f"/load/{i}/{j}"))
                session = c.sock.session if i % 2 == 0 else None
            finally:
                c.close()

    load(20)
    before = sluice.stats()["heap_allocations_after_startup"]
    load(60)
    after = sluice.stats()["heap_allocations_after_startup"]
    assert after == before, f"{after - before} heap allocations during 300 requests over TLS"


def test_missing_key_or_bad_certificate_refuses_to_start(sluice_bin, tmp_path):
    """`--tls-cert` without `--tls-key`, a missing file, and a key of another certificate
    each stop start-up with a line that names the problem."""
    cases = [
        (["--tls-cert", str(TESTDATA / "ecdsa.pem")], "ecdsa.pem\" needs its private key: --tls-key"),
        (["--tls-cert", str(tmp_path / "none.pem"), "--tls-key", str(TESTDATA / "ecdsa.key")],
         "none.pem: cannot open: no such file"),
        (["--tls-cert", str(TESTDATA / "rsa.pem"), "--tls-key", str(TESTDATA / "ecdsa.key")],
         "ecdsa.key: the key does not match the first certificate in"),
    ]
    for args, expected in cases:
        out = subprocess.run([sluice_bin, "--listen", "127.0.0.1:0", "--backend", "127.0.0.1:9",
                              *args], capture_output=True, text=True, timeout=10)
        assert out.returncode == 2, (args, out.returncode, out.stderr)
        assert expected in out.stderr, (args, out.stderr)


def test_readme_https_example_serves_https(sluice, backend):
    """The README's HTTPS command, with the test certificate for `site.pem` and `site.key`
    and this test's backend and port, serves a request over TLS."""
    readme = (REPO / "README.md").read_text()
    block = readme.split("## HTTPS", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    words = block.split()
    assert words[0] == "sluice", block
    args, i = [], 1
    while i < len(words):
        if words[i] in ("--listen", "--backend"):
            i += 2  # the test's own
            continue
        args.append({"site.pem": str(TESTDATA / "ecdsa.pem"),
                     "site.key": str(TESTDATA / "ecdsa.key")}.get(words[i], words[i]))
        i += 1
    assert args == tls_args(), args
    sluice.start([backend], args=args)
    c = tls_client(sluice.port)
    try:
        assert Echoed(c.request("GET", "/readme")).header("X-Forwarded-Proto") == "https"
    finally:
        c.close()


def test_an_idle_tls_connection_gives_its_buffers_back_and_then_serves_again(sluice, backend):
    """After the hot second an idle keep-alive TLS connection holds no buffer (its plaintext
    and both ciphertext buffers went back to the pool); its next request is served."""
    sluice.start([backend], args=[*tls_args(), "--client-idle-timeout", "10s"])
    c = tls_client(sluice.port)
    try:
        assert Echoed(c.request("GET", "/before")).target == "/before"
        deadline = time.monotonic() + 5
        while sluice.stats()["buffers_in_use"] != 0:
            assert time.monotonic() < deadline, "the idle connection kept its buffers"
            time.sleep(0.2)
        assert Echoed(c.request("GET", "/after")).target == "/after"
    finally:
        c.close()


def test_a_close_delimited_response_ends_with_close_notify(sluice, make_backend):
    """A response whose end is the close ends with a TLS close_notify, so the client can tell
    it from a truncation: reading to the end raises no "EOF in violation of protocol"."""
    backend = make_backend(close_delimited(b"all of it\n" * 100))
    sluice.start([backend], args=tls_args())
    c = tls_client(sluice.port, suppress_ragged_eofs=False)
    try:
        c.send(build_request("GET", "/close-delimited"))
        data = b""
        while True:
            chunk = c.sock.recv(65536)  # SSLEOFError here if the close had no close_notify
            if not chunk:
                break
            data += chunk
        assert data.startswith(b"HTTP/1.1 200"), data[:100]
        assert data.endswith(b"all of it\n" * 100)
    finally:
        c.close()


def test_a_websocket_upgrade_tunnels_through_tls(sluice, make_backend):
    """An upgrade over TLS: the 101 and the backend's greeting arrive, then messages both
    ways, each echoed by the backend."""
    from test_upgrade import GREETING, WS_HEADERS
    backend = make_backend(upgrade())
    sluice.start([backend], args=tls_args())
    c = tls_client(sluice.port)
    try:
        c.send_request("GET", "/chat", headers=WS_HEADERS)
        r = c.read_response()
        assert r.status == 101, r
        assert c.read_exact(len(GREETING), 3.0) == GREETING
        for m in (b"message one", b"\x81\x05hello", bytes(range(256)) * 4):
            c.send(m)
            assert c.read_exact(5 + len(m), 5.0) == b"echo:" + m
    finally:
        c.close()


def test_a_large_body_to_a_tls_client_is_sealed_not_spliced(sluice, make_backend):
    """A 1 MiB response with a length (which a plain client gets spliced) reaches a TLS
    client whole: sluice copies and seals it, it never splices around the TLS layer."""
    from backends import large, large_body
    backend = make_backend(large(1 << 20))
    sluice.start([backend], args=tls_args())
    c = tls_client(sluice.port)
    try:
        r = c.request("GET", "/large")
        assert r.status == 200
        assert r.body == large_body(1 << 20)
    finally:
        c.close()
