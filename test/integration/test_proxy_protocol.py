"""The PROXY protocol on listeners (issue 24): v1 and v2 headers written here in Python, on a
plain listener, before a TLS ClientHello, and before HTTP/2's preface; the carried address is
the client's in X-Forwarded-For, `$client_ip`, the access log; a listener that takes it
refuses a connection without one (counted in /metrics), and one that does not still answers
a PROXY line with 400; a file's listener turns it on alone, and a reload turns it on. The
interop test at the end puts HAProxy (`send-proxy-v2`) in front, when it is installed.
Every test runs once per I/O backend.
"""

import json
import re
import shutil
import socket
import ssl
import struct
import subprocess
import threading
import time

import pytest

from backends import echo
from client import BufferedSocket, Client, Deadline, read_response, request, wait_until
from conftest import free_port, write_zon
from h2client import H2Client
from test_access_log import file_lines, wait_for_lines
from test_admin import ADMIN_RE, scrape, value
from test_config_docs import check
from test_reload import reload
from test_tls import TESTDATA, client_context

V2_SIGNATURE = b"\r\n\r\n\x00\r\nQUIT\n"


def v1(source="192.0.2.7", port=56324, destination=None, dport=443):
    family = "TCP6" if ":" in source else "TCP4"
    destination = destination or ("2001:db8::1" if ":" in source else "198.51.100.1")
    return f"PROXY {family} {source} {destination} {port} {dport}\r\n".encode()


def v2(source="192.0.2.7", port=56324, destination=None, dport=443, tlvs=b"", command=0x21):
    """A v2 header as HAProxy's `send-proxy-v2` writes it (TCP over IPv4 or IPv6)."""
    destination = destination or ("2001:db8::1" if ":" in source else "198.51.100.1")
    if ":" in source:
        family = 0x21
        addresses = (socket.inet_pton(socket.AF_INET6, source)
                     + socket.inet_pton(socket.AF_INET6, destination))
    else:
        family = 0x11
        addresses = socket.inet_aton(source) + socket.inet_aton(destination)
    body = addresses + struct.pack("!HH", port, dport) + tlvs
    return V2_SIGNATURE + bytes([command, family]) + struct.pack("!H", len(body)) + body


def echoed(payload, name):
    """The values of field `name` an echo backend received (`payload`: its JSON)."""
    return [v for k, v in payload["headers"] if k.lower() == name]


def forwarded_for(response):
    (xff,) = echoed(response.json(), "x-forwarded-for")
    return xff


def start_admin(sluice, backend, args=()):
    sluice.start([backend], args=["--proxy-protocol", "--admin", "127.0.0.1:0", *args])
    return int(sluice.wait_for_line(ADMIN_RE, timeout=5.0).group("port"))


def connect_after(port, header, pieces=1):
    """A new connection that first sends `header`, cut into about `pieces` sends."""
    c = Client(port)
    step = max(1, len(header) // pieces)
    for i in range(0, len(header), step):
        c.sock.sendall(header[i:i + step])
        if pieces > 1:
            time.sleep(0.005)
    return c


def get_after(port, header, path="/"):
    """A GET on a new connection that first sends `header`."""
    with connect_after(port, header) as c:
        return c.request("GET", path)


def refused(port, data, timeout=5.0):
    """Sends `data` and returns what came back before sluice closed (b"": nothing)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        got = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                return got
            got += chunk


def test_v1_and_v2_carry_the_client_address_everywhere(sluice, backend, tmp_path):
    """v1 (IPv4 and IPv6) and v2 (with a TLV) give XFF, `$client_ip` and the access log the
    carried address on every request of the connection; the header may arrive in pieces,
    and the request may share its segment."""
    log = tmp_path / "access.log"
    admin = start_admin(sluice, backend, args=[
        "--request-header", "X-Client: $client_ip", "--access-log", str(log),
        "--access-log-format", "json"])
    r = get_after(sluice.port, v1() + b"GET /same-segment HTTP/1.1\r\nHost: a\r\n\r\n")
    assert r.status == 200
    assert forwarded_for(r) == "192.0.2.7"
    cases = [(v1(), "192.0.2.7"), (v1("2001:db8::7", 1), "2001:db8::7"),
             (v2("203.0.113.9", tlvs=b"\x04\x00\x02ab"), "203.0.113.9"),
             (v2("2001:db8::9", 80, "2001:db8::1"), "2001:db8::9")]
    for header, want in cases:
        for pieces in (1, 7):
            with connect_after(sluice.port, header, pieces) as c:
                for _ in range(2):  # keep-alive: the connection keeps the address
                    r = c.request("GET", "/x")
                    assert r.status == 200, r
                    assert forwarded_for(r) == want
                    assert echoed(r.json(), "x-client") == [want]
    lines = wait_for_lines(lambda: file_lines(log), 2 + len(cases) * 4)
    clients = {json.loads(line)["client"] for line in lines}
    assert clients == {"192.0.2.7", "2001:db8::7", "203.0.113.9", "2001:db8::9"}
    families = scrape(admin)
    assert value(families, "sluice_proxy_protocol_headers_total") == 1 + len(cases) * 2
    assert value(families, "sluice_proxy_protocol_refused_total") == 0


def test_v2_local_and_v1_unknown_keep_the_peer(sluice, backend):
    """A sender's own health check (v2 LOCAL, v1 UNKNOWN) is served as the peer's."""
    start_admin(sluice, backend)
    local = V2_SIGNATURE + b"\x20\x00\x00\x00"
    for header in (local, b"PROXY UNKNOWN\r\n", v2(command=0x20)):
        r = get_after(sluice.port, header)
        assert r.status == 200 and forwarded_for(r) == "127.0.0.1"


def test_a_connection_without_a_good_header_is_refused_and_counted(sluice, backend):
    """No header, a malformed one, UDP, a ClientHello, or none within the head deadline: the
    connection is closed with nothing written, counted and logged (rate limited)."""
    admin = start_admin(sluice, backend, args=["--client-header-timeout", "300ms"])
    bad = [
        b"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
        b"PROXY TCP4 192.0.2.7 198.51.100.1 056324 443\r\nGET / HTTP/1.1\r\n\r\n",
        b"PROXY TCP4 192.0.2.7 198.51.100.1 1 2\nGET / HTTP/1.1\r\n\r\n",
        b"PROXY UNKNOWN " + b"x" * 120,
        V2_SIGNATURE + b"\x21\x12\x00\x0c" + b"\x00" * 12,  # UDP
        V2_SIGNATURE + b"\x21\x11\xff\xff",  # past 1 KiB
        b"\x16\x03\x01\x00\xc8\x01\x00\x00\xc4\x03\x03",  # a TLS ClientHello
    ]
    for data in bad:
        assert refused(sluice.port, data) == b"", data
    # Half a header, then silence: the head deadline ends it.
    started = time.monotonic()
    assert refused(sluice.port, b"PROXY TCP4 192.0.2.7 ") == b""
    assert 0.2 < time.monotonic() - started < 3.0
    # A TCP health check (connect, close) is closed quietly and not counted.
    socket.create_connection(("127.0.0.1", sluice.port), timeout=5).close()
    assert sluice.wait_for_line(re.compile(r"PROXY protocol: connection from 127\.0\.0\.1 "
                                           r"refused: no PROXY protocol header"), timeout=5)
    families = scrape(admin)
    assert value(families, "sluice_proxy_protocol_refused_total") == len(bad) + 1
    assert value(families, "sluice_proxy_protocol_headers_total") == 0
    assert get_after(sluice.port, v1()).status == 200  # still serving


def test_a_listener_without_it_answers_a_proxy_line_with_400(sluice, backend):
    sluice.start([backend])
    with Client(sluice.port) as c:
        c.sock.sendall(v1())
        r = read_response(c)
        assert r.status == 400


def ssl_via_bio(port, header, context, server_name="ecdsa.test"):
    """A TLS client whose PROXY header and ClientHello leave in one send, so that sluice
    finds the start of the handshake behind the header in the same read."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname=server_name)
    first = True
    while True:
        try:
            tls.do_handshake()
            break
        except ssl.SSLWantReadError:
            data = outgoing.read()
            sock.sendall((header if first else b"") + data)
            first = False
            got = sock.recv(65536)
            if not got:
                raise ConnectionError("closed during the handshake")
            incoming.write(got)
    sock.sendall(outgoing.read())
    return sock, tls, incoming, outgoing


def test_https_listener_reads_the_header_before_the_client_hello(sluice, backend):
    """The header comes before TLS: in the ClientHello's segment, or alone before it."""
    start_admin(sluice, backend, args=["--tls-cert", TESTDATA / "ecdsa.pem",
                                       "--tls-key", TESTDATA / "ecdsa.key"])
    context = client_context()
    sock, tls, incoming, outgoing = ssl_via_bio(sluice.port, v2("198.51.100.77"), context)
    try:
        tls.write(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        sock.sendall(outgoing.read())
        data = b""
        while not (b"\r\n\r\n" in data and data.endswith(b"}")):
            incoming.write(sock.recv(65536))
            try:
                data += tls.read(65536)
            except ssl.SSLWantReadError:
                continue
        head, body = data.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 200 ")
        assert echoed(json.loads(body), "x-forwarded-for") == ["198.51.100.77"]
    finally:
        sock.close()
    c = Client(sluice.port)
    try:
        c.sock.sendall(v1("192.0.2.55"))
        c.sock = context.wrap_socket(c.sock, server_hostname="ecdsa.test")
        c.bsock = BufferedSocket(c.sock)
        r = c.request("GET", "/")
        assert r.status == 200 and forwarded_for(r) == "192.0.2.55"
        assert echoed(r.json(), "x-forwarded-proto") == ["https"]
    finally:
        c.close()


def test_http2_connections_carry_the_address_on_every_stream(sluice, backend):
    """h2c with prior knowledge behind a v2 header: the connection's address is every
    stream's (h2 by ALPN starts the same way as the HTTPS test's handshake above)."""
    start_admin(sluice, backend, args=["--http2", "on"])
    sock = socket.create_connection(("127.0.0.1", sluice.port), timeout=5)
    sock.sendall(v2("2001:db8::42", 9))
    client = H2Client(sock)
    try:
        sids = [client.request("GET", f"/s{i}") for i in range(3)]
        responses = client.wait(*sids)
        for sid in sids:
            r = responses[sid]
            assert r.status == 200
            assert echoed(json.loads(r.body), "x-forwarded-for") == ["2001:db8::42"]
    finally:
        client.close()


def test_a_file_listener_takes_it_alone_and_a_reload_turns_it_on(sluice, sluice_bin, backend,
                                                                  tmp_path):
    """`.proxy_protocol = true` on one listener; the other stays plain HTTP; the key is
    checked with its line and column; a reload turning it on applies to new connections."""
    lb, direct = free_port(), free_port()
    cfg = {"listeners": [{"name": "lb", "listen": f"127.0.0.1:{lb}", "proxy_protocol": True},
                         {"name": "direct", "listen": f"127.0.0.1:{direct}"}],
           "pools": {"app": {"backends": [backend.address]}}}
    path = write_zon(tmp_path / "pp.zon", cfg)
    sluice.start_config(path)
    assert sluice.listen_ports(2) == [lb, direct]
    assert forwarded_for(get_after(lb, v1("192.0.2.1"))) == "192.0.2.1"
    assert forwarded_for(request(direct, "GET", "/")) == "127.0.0.1"
    cfg["listeners"][1]["proxy_protocol"] = True
    reload(sluice, path, cfg, 2)
    assert forwarded_for(get_after(direct, v2("192.0.2.2"))) == "192.0.2.2"
    assert refused(direct, b"GET / HTTP/1.1\r\nHost: a\r\n\r\n") == b""

    bad = tmp_path / "bad.zon"
    bad.write_text('.{\n    .listeners = .{ .{ .listen = ":0", .proxy_protocol = 1 } },\n'
                   '    .backends = .{"127.0.0.1:9"},\n}\n')
    rc, out, err = check(sluice_bin, bad)
    assert rc == 1
    assert re.search(r"bad\.zon:2:\d+: .*expected true or false", out + err), out + err


def haproxy_config(tmp_path, sluice_port, sender):
    port = socket.socket()
    port.bind(("127.0.0.1", 0))
    front = port.getsockname()[1]
    port.close()
    text = f"""
global
    log stderr format raw local0 err
defaults
    mode tcp
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend in
    bind 127.0.0.1:{front}
    default_backend out
backend out
    server s1 127.0.0.1:{sluice_port} {sender}
"""
    path = tmp_path / "haproxy.cfg"
    path.write_text(text)
    return path, front


@pytest.mark.parametrize("sender", ["send-proxy", "send-proxy-v2"])
def test_haproxy_sends_it(sluice, backend, tmp_path, sender):
    """HAProxy in TCP mode in front (`send-proxy`, `send-proxy-v2`): the client address sluice
    forwards is the one HAProxy saw (127.0.0.2, while HAProxy itself connects from 127.0.0.1).
    Skips when haproxy is not installed."""
    haproxy = shutil.which("haproxy")
    if haproxy is None:
        pytest.skip("haproxy is not installed")
    start_admin(sluice, backend)
    path, front = haproxy_config(tmp_path, sluice.port, sender)
    proc = subprocess.Popen([haproxy, "-f", str(path), "-db"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    try:
        deadline = Deadline(5.0)
        while True:
            try:
                sock = socket.socket()
                sock.settimeout(5)
                sock.bind(("127.0.0.2", 0))
                sock.connect(("127.0.0.1", front))
                break
            except OSError:
                sock.close()
                deadline.check("haproxy listening")
                time.sleep(0.05)
        with sock:
            sock.sendall(b"GET /via-haproxy HTTP/1.1\r\nHost: a\r\n\r\n")
            r = read_response(sock)
        assert r.status == 200
        assert forwarded_for(r) == "127.0.0.2"
    finally:
        proc.terminate()
        proc.wait(timeout=5)


class ProxyReceiver:
    """A backend that reads a PROXY v2 header first on each connection (parsed here, strictly:
    signature, version and command, TCP over IPv4 or IPv6), then HTTP/1.1 requests, and
    answers each with the header's source and destination, keeping the connection open.
    `connections` lists each connection's (source, destination), or the refusal's reason."""

    def __init__(self, unix_path=None):
        if unix_path is None:
            self.listener = socket.create_server(("127.0.0.1", 0))
            self.port = self.listener.getsockname()[1]
        else:  # A Unix socket backend (test_unix_backends.py).
            self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.listener.bind(unix_path)
            self.listener.listen(16)
            self.port = None
        self.connections = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.connection, args=(sock,), daemon=True).start()

    def connection(self, sock):
        with sock:
            sock.settimeout(5)
            bs = BufferedSocket(sock)
            deadline = Deadline(5)
            try:
                fixed = bs.read_exact(16, deadline)
                body = bs.read_exact(struct.unpack("!H", fixed[14:16])[0], deadline)
            except (ConnectionError, OSError) as e:
                self.connections.append(("refused", str(e)))
                return
            if fixed[:12] == V2_SIGNATURE and fixed[12:16] == b"\x20\x00\x00\x00":
                # LOCAL: the sender's own connection (a health probe), with no addresses.
                self.connections.append(("local", ""))
                self.answer_local(sock, bs)
                return
            if fixed[:12] != V2_SIGNATURE or fixed[12] != 0x21 or fixed[13] not in (0x11, 0x21):
                self.connections.append(("refused", fixed.hex()))
                return
            family, size = (socket.AF_INET, 4) if fixed[13] == 0x11 else (socket.AF_INET6, 16)
            src = socket.inet_ntop(family, body[:size])
            dst = socket.inet_ntop(family, body[size:2 * size])
            sport, dport = struct.unpack("!HH", body[2 * size:2 * size + 4])
            self.connections.append((f"{src}:{sport}", f"{dst}:{dport}"))
            while True:
                try:
                    bs.read_until(b"\r\n\r\n", Deadline(5))
                except (ConnectionError, OSError):
                    return
                text = f"{src}:{sport} {dst}:{dport}".encode()
                sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(text), text))

    def answer_local(self, sock, bs):
        try:
            bs.read_until(b"\r\n\r\n", Deadline(5))
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nlocal")
        except (ConnectionError, OSError):
            pass

    def close(self):
        self.listener.close()


def test_health_probes_to_a_send_proxy_pool_send_a_local_header(sluice):
    """A pool with `--send-proxy v2` and active checks: each probe connection starts with a v2
    LOCAL header (HAProxy's `check-send-proxy`), so a backend that requires the header keeps
    answering the probes, stays up, and serves; before, probes were refused and it went down."""
    receiver = ProxyReceiver()
    try:
        sluice.start([f"127.0.0.1:{receiver.port}"], args=[
            "--send-proxy", "v2", "--health-path", "/healthz", "--health-interval", "100ms",
            "--health-fall", "1"])
        assert wait_until(lambda: sum(1 for kind, _ in receiver.connections if kind == "local") >= 3, 5.0), \
            receiver.connections
        assert not [c for c in receiver.connections if c[0] == "refused"], receiver.connections
        with Client(sluice.port) as c:
            assert c.request("GET", "/").status == 200
        assert not sluice.log_lines(re.compile(r"is down")), sluice.stderr_text()
    finally:
        receiver.close()


def test_send_proxy_v2_gives_each_backend_connection_its_client(sluice):
    """`--send-proxy v2`: every backend connection starts with a v2 header carrying the
    client's address (the PROXY protocol's own, when the listener took one) and the local
    address it reached sluice on; such connections are never reused, so three requests on
    one client connection are three backend connections, each with its header."""
    receiver = ProxyReceiver()
    try:
        sluice.start([f"127.0.0.1:{receiver.port}"], args=["--send-proxy", "v2"])
        with Client(sluice.port) as c:
            bodies = [c.request("GET", f"/{i}").body.decode() for i in range(3)]
        src, dst = bodies[0].split()
        assert src.startswith("127.0.0.1:") and dst == f"127.0.0.1:{sluice.port}"
        assert bodies == [bodies[0]] * 3
        assert len(receiver.connections) == 3
        assert all(conn == (src, dst) for conn in receiver.connections), receiver.connections
    finally:
        receiver.close()


def test_proxy_protocol_in_and_out(make_sluice):
    """Received on the listener, sent on to the pool: the backend sees the first client."""
    receiver = ProxyReceiver()
    try:
        sluice = make_sluice()
        sluice.start([f"127.0.0.1:{receiver.port}"], args=["--send-proxy", "v2", "--proxy-protocol"])
        r = get_after(sluice.port, v1("2001:db8::5", 4242))
        assert r.status == 200
        # An IPv6 client reached an IPv4 listener: both are written as IPv6.
        assert r.body.decode() == f"2001:db8::5:4242 ::ffff:127.0.0.1:{sluice.port}"
    finally:
        receiver.close()


def test_haproxy_accepts_what_sluice_sends(sluice, tmp_path):
    """HAProxy with `accept-proxy` as the backend: `%[src]` is sluice's client (127.0.0.2, as
    sluice connects from 127.0.0.1). Skips when haproxy is not installed."""
    haproxy = shutil.which("haproxy")
    if haproxy is None:
        pytest.skip("haproxy is not installed")
    port = free_port()
    path = tmp_path / "haproxy.cfg"
    path.write_text(f"""
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend in
    bind 127.0.0.1:{port} accept-proxy
    http-request return status 200 content-type text/plain lf-string "src=%[src] dst=%[dst]"
""")
    proc = subprocess.Popen([haproxy, "-f", str(path), "-db"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    try:
        sluice.start([f"127.0.0.1:{port}"], args=["--send-proxy", "v2"])
        deadline = Deadline(5.0)
        while True:
            sock = socket.socket()
            sock.settimeout(5)
            sock.bind(("127.0.0.2", 0))
            try:
                sock.connect(("127.0.0.1", sluice.port))
                sock.sendall(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
                r = read_response(sock)
            finally:
                sock.close()
            if r.status == 200:
                break
            deadline.check("haproxy answering")  # 502 until it listens
            time.sleep(0.05)
        assert r.body.decode() == f"src=127.0.0.2 dst=127.0.0.1"
    finally:
        proc.terminate()
        proc.wait(timeout=5)
