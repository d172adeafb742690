"""TLS to backends (a pool's `.tls`, `--backend-tls`), against real Python ssl backends.

Certificates are made at test time (module scope) with `cryptography`: a CA, a backend
certificate for `backend.test`, `localhost` and 127.0.0.1 signed by it, a self-signed one, and
a client CA with a client certificate for mutual TLS. Every test runs once per I/O backend.
"""

import datetime
import re
import ssl
import threading
import time

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from client import Client, Echoed
from conftest import ZonEnum, assert_quiescent, write_zon


def _name(common_name):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _certificate(subject, key, issuer, issuer_key, *, ca=False, sans=(), client=False):
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder()
               .subject_name(_name(subject)).issuer_name(_name(issuer))
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(hours=1))
               .not_valid_after(now + datetime.timedelta(days=2))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(sans)), critical=False)
    if not ca:
        usage = x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH if client else x509.oid.ExtendedKeyUsageOID.SERVER_AUTH
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _write(directory, name, cert, key):
    cert_path = directory / f"{name}.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path = directory / f"{name}.key"
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return str(cert_path), str(key_path)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"))


def make_pki(d):
    """Paths: ca, server (cert, key), self_signed (cert, key), client_ca, client (cert, key)."""
    import ipaddress
    d.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _certificate("sluice test CA", ca_key, "sluice test CA", ca_key, ca=True)
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = _certificate("backend.test", server_key, "sluice test CA", ca_key, sans=[
        x509.DNSName("backend.test"), x509.DNSName("localhost"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    self_key = ec.generate_private_key(ec.SECP256R1())
    self_signed = _certificate("backend.test", self_key, "backend.test", self_key, sans=[
        x509.DNSName("backend.test"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    client_ca_key = ec.generate_private_key(ec.SECP256R1())
    client_ca = _certificate("sluice client CA", client_ca_key, "sluice client CA", client_ca_key, ca=True)
    client_key = ec.generate_private_key(ec.SECP256R1())
    client = _certificate("sluice-proxy", client_key, "sluice client CA", client_ca_key, client=True)
    paths = {
        "ca": _write(d, "ca", ca, ca_key)[0],
        "server": _write(d, "server", server, server_key),
        "self_signed": _write(d, "self", self_signed, self_key),
        "client_ca": _write(d, "client-ca", client_ca, client_ca_key)[0],
        "client": _write(d, "client", client, client_key),
        "dir": d,
    }
    return paths


def server_context(pki, which="server", require_client=False, version=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(*pki[which])
    if require_client:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(pki["client_ca"])
    if version is not None:
        ctx.minimum_version = ctx.maximum_version = version
    return ctx


def start_tls_pool(sluice, tmp_path, backends, tls, health=None, extra=None):
    pool = {"backends": [b.address for b in backends], "tls": tls}
    if health:
        pool["health"] = health
    if extra:
        pool.update(extra)
    path = write_zon(tmp_path / "tls.zon", {"listen": "127.0.0.1:0", "pools": {"app": pool}})
    return sluice.start_config(path)


def assert_echoed(sluice, *targets):
    """GETs on one client connection, each echoed by a backend."""
    c = Client(sluice.port)
    try:
        for target in targets:
            assert Echoed(c.request("GET", target)).target == target
    finally:
        c.close()


def test_verified_with_a_ca_keep_alive_on_one_tls_connection(sluice, make_backend, pki, tmp_path):
    """`.ca` verifies the backend (by its IP: no SNI); several requests, a 300 KB body each
    way, all on one TLS connection at the backend."""
    backend = make_backend(tls=server_context(pki))
    start_tls_pool(sluice, tmp_path, [backend], {"ca": pki["ca"]})
    c = Client(sluice.port)
    try:
        for i in range(5):
            e = Echoed(c.request("GET", f"/get/{i}"))
            assert e.target == f"/get/{i}"
        body = bytes(range(256)) * 1200
        e = Echoed(c.request("POST", "/post", body=body))
        assert e.body_len == len(body)
    finally:
        c.close()
    assert backend.connections == 1
    assert len(backend.tls_handshakes) == 1
    assert backend.tls_handshakes[0]["sni"] is None  # An IP address is never sent as SNI.
    assert backend.tls_handshakes[0]["version"] == "TLSv1.3"


def test_large_response_is_not_spliced_from_a_tls_backend(sluice, make_backend, pki, tmp_path):
    """A 1 MiB body (over splice_min) arrives whole: the records are opened, not spliced."""
    from backends import large, large_body
    backend = make_backend(large(1 << 20), tls=server_context(pki))
    start_tls_pool(sluice, tmp_path, [backend], {"ca": pki["ca"]})
    c = Client(sluice.port)
    try:
        r = c.request("GET", "/big")
        assert r.status == 200 and r.body == large_body(1 << 20)
    finally:
        c.close()


def test_server_name_is_sent_as_sni_and_checked(sluice, make_backend, pki, tmp_path):
    """`.server_name` is the SNI the backend sees and the name its certificate must carry."""
    backend = make_backend(tls=server_context(pki))
    start_tls_pool(sluice, tmp_path, [backend], {"ca": pki["ca"], "server_name": "backend.test"})
    assert_echoed(sluice, "/sni")
    assert backend.tls_handshakes[0]["sni"] == "backend.test"


def test_localhost_backend_sends_its_name(sluice, make_backend, pki, tmp_path):
    """A backend written `localhost:PORT` sends `localhost` as SNI and is checked against it."""
    backend = make_backend(tls=server_context(pki))
    path = write_zon(tmp_path / "tls.zon", {"listen": "127.0.0.1:0", "pools": {"app": {
        "backends": [f"localhost:{backend.port}"], "tls": {"ca": pki["ca"]}}}})
    sluice.start_config(path)
    assert_echoed(sluice, "/local")
    assert backend.tls_handshakes[0]["sni"] == "localhost"


@pytest.mark.parametrize("case", ["self_signed", "wrong_name"])
def test_failed_verification_is_a_502_with_the_reason(sluice, make_backend, pki, tmp_path, case):
    """A self-signed certificate, or one without the name asked for: 502, nothing sent to the
    backend, and a warning line naming AWS-LC's reason."""
    if case == "self_signed":
        backend = make_backend(tls=server_context(pki, "self_signed"))
        tls = {"ca": pki["ca"]}
        reason = "certificate verify failed"
    else:
        backend = make_backend(tls=server_context(pki))
        tls = {"ca": pki["ca"], "server_name": "other.test"}
        reason = "certificate verify failed"
    start_tls_pool(sluice, tmp_path, [backend], tls)
    c = Client(sluice.port)
    try:
        r = c.request("GET", "/nope")
        assert r.status == 502
        assert b"TLS handshake with the backend failed" in r.body
    finally:
        c.close()
    line = sluice.wait_for_line(r"TLS with backend 127\.0\.0\.1:\d+ of pool app failed", timeout=5)
    assert reason in line.string, line.string
    detail = "self signed certificate" if case == "self_signed" else "Hostname mismatch"
    assert detail in line.string, line.string
    assert backend.requests == []


def test_failed_verification_is_tried_on_the_next_backend(sluice, make_backend, pki, tmp_path):
    """A backend whose certificate fails is a connect-class failure: the request goes to the
    next backend (bounded by the pool's tries), and the client gets its 200."""
    bad = make_backend(tls=server_context(pki, "self_signed"))
    good = make_backend(tls=server_context(pki))
    start_tls_pool(sluice, tmp_path, [bad, good], {"ca": pki["ca"]}, extra={"strategy": ZonEnum("round_robin")})
    c = Client(sluice.port)
    try:
        for i in range(4):
            assert c.request("GET", f"/r/{i}").status == 200
    finally:
        c.close()
    assert len(good.requests) == 4 and bad.requests == []


def test_verify_false_accepts_a_self_signed_backend(sluice, make_backend, pki, tmp_path):
    """`.verify = false` talks to a backend no CA vouches for."""
    backend = make_backend(tls=server_context(pki, "self_signed"))
    start_tls_pool(sluice, tmp_path, [backend], {"verify": False})
    assert_echoed(sluice, "/unverified")


def test_mutual_tls_with_and_without_a_client_certificate(make_sluice, make_backend, pki, tmp_path):
    """A backend that requires a client certificate serves the pool that shows one, and
    refuses (a 502) the pool that does not."""
    backend = make_backend(tls=server_context(pki, require_client=True))
    cert, key = pki["client"]
    sluice = make_sluice()
    start_tls_pool(sluice, tmp_path, [backend], {"ca": pki["ca"], "client_cert": cert, "client_key": key})
    c = Client(sluice.port)
    try:
        assert Echoed(c.request("GET", "/mtls")).target == "/mtls"
    finally:
        c.close()
    assert backend.tls_handshakes[0]["client_cert"] == {"commonName": "sluice-proxy"}
    sluice = make_sluice()
    sluice.start_config(write_zon(tmp_path / "plain.zon", {"listen": "127.0.0.1:0", "pools": {"app": {
        "backends": [backend.address], "tls": {"ca": pki["ca"]}, "retry": {"tries": 1}}}}))
    c = Client(sluice.port)
    try:
        r = c.request("GET", "/no-cert")
        # TLS 1.3: the backend's "certificate required" alert comes after the client's side of
        # the handshake; it is still a TLS failure, said as one, not a reset.
        assert r.status == 502 and b"TLS handshake with the backend failed" in r.body, r
    finally:
        c.close()
    sluice.wait_for_line(re.compile(r"warn: .*certificate required"), timeout=5)
    assert [r.target for r in backend.requests] == ["/mtls"]


def test_a_new_connection_resumes_the_session(sluice, make_backend, pki, tmp_path):
    """With keep-alive off at the backend, each request needs a new connection: after the
    first full handshake, the next ones resume (the backend reports session_reused)."""
    from backends import echo
    backend = make_backend(echo(close=True), tls=server_context(pki))
    start_tls_pool(sluice, tmp_path, [backend], {"ca": pki["ca"]})
    c = Client(sluice.port)
    try:
        for i in range(4):
            assert Echoed(c.request("GET", f"/again/{i}")).target == f"/again/{i}"
    finally:
        c.close()
    assert backend.wait_for(lambda: len(backend.tls_handshakes) == 4)
    reused = [h["reused"] for h in backend.tls_handshakes]
    assert reused[0] is False and all(reused[1:]), reused


@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3])
def test_resumption_over_tls_1_2_and_1_3(sluice, make_backend, pki, tmp_path, version):
    """Both protocol versions resume (TLS 1.2 with the backend's ticket, 1.3 with one of its
    tickets each time)."""
    from backends import echo
    backend = make_backend(echo(close=True), tls=server_context(pki, version=version))
    start_tls_pool(sluice, tmp_path, [backend], {"ca": pki["ca"]})
    c = Client(sluice.port)
    try:
        for i in range(3):
            assert c.request("GET", f"/v/{i}").status == 200
    finally:
        c.close()
    assert backend.wait_for(lambda: len(backend.tls_handshakes) == 3)
    assert [h["reused"] for h in backend.tls_handshakes] == [False, True, True]


@pytest.mark.time_limit(30)
def test_health_checks_over_tls_mark_down_and_up(sluice, make_backend, pki, tmp_path):
    """Active checks go over TLS with the pool's settings: B's health path answering 503
    takes it down, 200 brings it up; probes after the first resume their session; and a
    backend whose certificate fails verification is down with AWS-LC's reason."""
    from backends import health_endpoint
    ha, hb = health_endpoint(), health_endpoint()
    a = make_backend(ha, name="A", tls=server_context(pki))
    b = make_backend(hb, name="B", tls=server_context(pki))
    bad = make_backend(health_endpoint(), name="C", tls=server_context(pki, "self_signed"))
    start_tls_pool(sluice, tmp_path, [a, b, bad], {"ca": pki["ca"]}, health={
        "path": "/health", "interval": "100ms", "timeout": "1s", "rise": 2, "fall": 2})
    sluice.wait_for_line(rf"backend {re.escape(bad.address)} is down: active check failed "
                         r"\(TLS: certificate verify failed: self signed certificate\)", timeout=5)
    assert b.wait_for(lambda: hb.probes >= 2, 5.0)
    hb.set_status(503)
    sluice.wait_for_line(rf"backend {re.escape(b.address)} is down: active check failed \(status 503\)", timeout=5)
    names = [Echoed(Client(sluice.port).request("GET", f"/down/{i}")).backend for i in range(6)]
    assert set(names) == {"A"}, names
    hb.set_status(200)
    sluice.wait_for_line(rf"backend {re.escape(b.address)} is up: active checks pass", timeout=5)
    probes = [h for h in b.tls_handshakes]
    assert probes[0]["reused"] is False and any(h["reused"] for h in probes[1:]), probes
    assert bad.requests == []


def test_command_line_backend_tls(sluice, make_backend, pki):
    """`--backend-tls ca=FILE,server-name=NAME` is the file's `.tls` on the command line."""
    backend = make_backend(tls=server_context(pki))
    sluice.start([backend], args=["--backend-tls", f"ca={pki['ca']},server-name=backend.test"])
    assert_echoed(sluice, "/cli/1", "/cli/2")
    assert backend.tls_handshakes[0]["sni"] == "backend.test"


def test_a_websocket_upgrade_tunnels_through_the_backend_tls(sluice, make_backend, pki):
    """An upgrade to a TLS backend: the 101 and the greeting come through the codec, then
    messages both ways, each echoed by the backend over its TLS connection."""
    from backends import upgrade
    from test_upgrade import GREETING, WS_HEADERS
    backend = make_backend(upgrade(), tls=server_context(pki))
    sluice.start([backend], args=["--backend-tls", f"ca={pki['ca']}"])
    c = Client(sluice.port)
    try:
        c.send_request("GET", "/chat", headers=WS_HEADERS)
        r = c.read_response()
        assert r.status == 101, r
        assert c.read_exact(len(GREETING), 3.0) == GREETING
        for m in (b"message one", b"\x81\x05hello", bytes(range(256)) * 64):
            c.send(m)
            assert c.read_exact(5 + len(m), 5.0) == b"echo:" + m
    finally:
        c.close()


def test_a_missing_ca_file_is_refused_at_start_and_by_check(sluice_bin, make_backend, tmp_path):
    """A pool's TLS files are read at start-up and by `sluice check`: a missing one is named."""
    import subprocess
    path = write_zon(tmp_path / "bad.zon", {"listen": "127.0.0.1:0", "pools": {"app": {
        "backends": ["127.0.0.1:9"], "tls": {"ca": "missing-ca.pem"}}}})
    done = subprocess.run([sluice_bin, "check", str(path)], capture_output=True, text=True, timeout=10)
    assert done.returncode == 1
    assert f"pool app: tls: {tmp_path}/missing-ca.pem: cannot open: no such file" in done.stderr
    done = subprocess.run([sluice_bin, "--config", str(path)], capture_output=True, text=True, timeout=10)
    assert done.returncode == 1
    assert "missing-ca.pem: cannot open: no such file" in done.stderr


def test_a_reload_picks_up_a_changed_ca_file_and_refuses_a_missing_one(sluice, make_backend, pki, tmp_path):
    """The pool's settings unchanged but its CA file rewritten: a reload rebuilds the pool, so
    a backend the old CA could not verify (502) is served after it (200). A reload whose CA
    file is gone is refused, naming it, and the running configuration keeps serving."""
    import shutil
    import signal
    from test_reload import generation_re, refused_reload
    backend = make_backend(tls=server_context(pki))
    ca = tmp_path / "trusted.pem"
    shutil.copy(pki["client_ca"], ca)  # Not the CA that signed the backend's certificate.
    start_tls_pool(sluice, tmp_path, [backend], {"ca": str(ca)}, extra={"retry": {"tries": 1}})
    c = Client(sluice.port)
    try:
        assert c.request("GET", "/before").status == 502
    finally:
        c.close()
    shutil.copy(pki["ca"], ca)
    mark = sluice.mark()
    sluice.signal(signal.SIGHUP)
    sluice.wait_for_line(generation_re(2), 10.0, start=mark)
    assert_echoed(sluice, "/after")
    ca.unlink()
    index = refused_reload(sluice)
    assert "trusted.pem: cannot open: no such file" in sluice.lines[index]
    assert_echoed(sluice, "/still")


def test_a_reload_adds_the_first_tls_pool(sluice, make_backend, pki, tmp_path):
    """Started with no pool speaking TLS, a reload gives one `.tls` (and active checks over
    TLS): its requests go to the TLS backend, verified, on pooled connections and resumed
    sessions, with no heap allocation on the request path; the plain pool keeps serving."""
    import signal
    from test_reload import generation_re
    plain = make_backend()
    secure = make_backend(tls=server_context(pki))
    routes = [{"path_prefix": "/tls/", "pool": "secure"}, {"path_prefix": "/", "pool": "plain"}]
    cfg = {"listen": "127.0.0.1:0", "routes": routes, "pools": {
        "plain": {"backends": [plain.address]},
        "secure": {"backends": [plain.address]}}}
    path = write_zon(tmp_path / "plain.zon", cfg)
    sluice.start_config(path, workers=2)
    assert_echoed(sluice, "/before", "/tls/before")
    cfg["listen"] = f"127.0.0.1:{sluice.port}"
    cfg["pools"]["secure"] = {"backends": [secure.address], "tls": {"ca": pki["ca"]},
                              "health": {"path": "/health", "interval": "200ms"}}
    write_zon(path, cfg)
    mark = sluice.mark()
    sluice.signal(signal.SIGHUP)
    sluice.wait_for_line(generation_re(2), 10.0, start=mark)
    for i in range(10):
        assert_echoed(sluice, f"/tls/{i}/a", f"/tls/{i}/b", f"/plain/{i}")
    assert any(r.target.startswith("/tls/") for r in secure.requests), "nothing reached the TLS backend"
    assert_quiescent(sluice)


def test_metrics_count_upstream_handshakes_and_resumptions(sluice, make_backend, pki):
    """`sluice_upstream_tls_handshakes_total` and `..._resumptions_total` per pool: three
    requests to a backend that closes after each are three handshakes, the last two resumed."""
    from backends import echo
    from test_admin import scrape, start_with_admin, value
    backend = make_backend(echo(close=True), tls=server_context(pki))
    port = start_with_admin(sluice, [backend], args=["--backend-tls", f"ca={pki['ca']}"])
    assert_echoed(sluice, "/m/1")
    assert_echoed(sluice, "/m/2")
    assert_echoed(sluice, "/m/3")
    m = scrape(port)
    assert value(m, "sluice_upstream_tls_handshakes_total", pool="default") == 3
    assert value(m, "sluice_upstream_tls_resumptions_total", pool="default") == 2


def test_a_plain_http_backend_in_a_tls_pool_is_a_502_with_the_reason(sluice, pki):
    """A backend that does not speak TLS answers the ClientHello with an HTTP 400 (as nginx
    does on a plain port): the handshake fails, a 502, AWS-LC's reason in the log."""
    import socket
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)

    def answer():
        conn, _ = server.accept()
        conn.recv(4096)
        conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        conn.close()

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    try:
        address = f"127.0.0.1:{server.getsockname()[1]}"
        sluice.start(args=["--backend", address, "--backend-tls", f"ca={pki['ca']}", "--tries", "1"])
        c = Client(sluice.port)
        try:
            assert c.request("GET", "/plain").status == 502
        finally:
            c.close()
        line = sluice.wait_for_line(r"TLS with backend .* failed in the handshake: (.+); \d+ more", timeout=5)
        assert "wrong version number" in line.group(1) or "packet length" in line.group(1), line.string
    finally:
        thread.join(5)
        server.close()


def test_a_backend_silent_after_the_client_hello_is_a_connect_timeout(sluice, pki):
    """A backend that accepts TCP and never answers the ClientHello: the handshake is bounded
    by the connect timeout (a 504), and the connection is closed."""
    import socket
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # The kernel completes TCP handshakes; nobody reads.
    try:
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        sluice.start(args=["--backend", address, "--backend-tls", f"ca={pki['ca']}", "--tries", "1",
                           "--upstream-connect-timeout", "300ms"])
        started = time.monotonic()
        c = Client(sluice.port)
        try:
            r = c.request("GET", "/silent")
        finally:
            c.close()
        assert r.status == 504
        assert 0.25 < time.monotonic() - started < 3.0
    finally:
        silent.close()
