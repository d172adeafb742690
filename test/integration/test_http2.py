"""HTTP/2 from clients (issue 22, part 2): h2c with prior knowledge on a plain listener that
allows it (`--http2 on`), ALPN `h2` on HTTPS listeners (on by default), and each stream an
exchange to an HTTP/1.1 pool, with the conversions RFC 9113 §8 asks for both ways.

Clients: the `h2` package (h2client.py) for everything a test must see frame by frame, and
curl (`--http2`, `--http2-prior-knowledge`) as a real client. Every test runs once per I/O
backend.
"""

import hashlib
import json
import shutil
import signal
import socket
import subprocess
import threading
import time

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.settings
import pytest

from backends import chunked, echo, fixed, slow_head
from client import request
from conftest import free_port, write_zon
from h2client import H2Client, alpn_context
from test_admin import scrape, start_with_admin, value
from test_tls import tls_args as cert_args

H2C = ["--http2", "on"]


def echoed(response):
    assert response.status == 200, (response.status, response.body[:200])
    return json.loads(response.body)


def fields(payload):
    return {k.lower(): v for k, v in payload["headers"]}


def test_prior_knowledge_get_reaches_the_pool_as_http11(sluice, backend):
    sluice.start([backend], args=H2C)
    c = H2Client.plain(sluice.port)
    r = c.get("/a/b?q=1", authority="app.test:8080", headers=[("user-agent", "h2-test")])
    got = echoed(r)
    assert got["method"] == "GET" and got["target"] == "/a/b?q=1" and got["version"] == "HTTP/1.1"
    seen = fields(got)
    # The pseudo-fields became the request line and Host; the forwarding fields are sluice's.
    assert seen["host"] == "app.test:8080"
    assert seen["x-forwarded-host"] == "app.test:8080"
    assert seen["x-forwarded-proto"] == "http"
    assert seen["x-forwarded-for"] == "127.0.0.1"
    assert seen["user-agent"] == "h2-test"
    assert got["framing"] == "none"
    # The response: lowercase names, and what the backend said.
    assert r.header("content-type") == "application/json"
    assert r.header("x-backend") == backend.name
    c.close()


def test_a_plain_listener_without_http2_refuses_the_preface(sluice, backend):
    """HTTP/2 is off on plain listeners by default: the preface is an HTTP/1.1 request line
    with version 2.0, answered 505 as before."""
    sluice.start([backend])
    r = request(sluice.port, "PRI", "*", version="HTTP/2.0", host=None)
    assert r.status == 505


def test_many_streams_share_one_connection(sluice, backend):
    sluice.start([backend], args=H2C)
    c = H2Client.plain(sluice.port)
    sids = [c.request("GET", f"/s/{i}") for i in range(40)]
    responses = c.wait(*sids)
    targets = sorted(echoed(responses[s])["target"] for s in sids)
    assert targets == sorted(f"/s/{i}" for i in range(40))
    assert len(backend.requests) == 40
    # And sequentially on the same connection afterwards, on the pool's kept connections:
    # a stream that ends well parks its backend connection as an HTTP/1.1 exchange does.
    opened = backend.connections
    for i in range(5):
        assert echoed(c.get(f"/after/{i}"))["target"] == f"/after/{i}"
    assert backend.connections == opened
    c.close()


def test_http2_max_streams_is_announced_and_held(sluice, make_backend):
    """--http2-max-streams 3: SETTINGS says 3, and three streams wait on a slow backend side by
    side; a client that opens a fourth once it has our SETTINGS breaks the protocol, and its
    connection ends with GOAWAY PROTOCOL_ERROR (nghttp2's answer; RFC 9113 5.1.2)."""
    slow = make_backend(slow_head(0.3))
    sluice.start([slow], args=(*H2C, "--http2-max-streams", "3"))
    c = H2Client.plain(sluice.port)
    c.get("/warm")  # Our SETTINGS are in and acknowledged by now.
    assert c.conn.remote_settings.max_concurrent_streams == 3
    sids = [c.request("GET", f"/s/{i}") for i in range(3)]
    responses = c.wait(*sids)
    assert all(responses[s].status == 200 for s in sids), responses
    # A client that ignores the limit (hyper-h2 would hold the fourth stream back itself).
    codes = h2.settings.SettingCodes
    c.conn.remote_settings[codes.MAX_CONCURRENT_STREAMS] = 1000
    c.conn.remote_settings.acknowledge()
    for i in range(4):
        c.request("GET", f"/over/{i}")
    c.wait(timeout=5.0)
    assert c.goaway is not None and c.goaway.error_code == h2.errors.ErrorCodes.PROTOCOL_ERROR, c.goaway
    c.close()


def test_extended_connect_is_not_announced(sluice, backend):
    """RFC 8441's SETTINGS_ENABLE_CONNECT_PROTOCOL is not sent (docs/HTTP2.md: WebSocket over
    HTTP/2 is not offered yet), so clients open their WebSockets over HTTP/1.1."""
    sluice.start([backend], args=H2C)
    c = H2Client.plain(sluice.port)
    c.get("/warm")  # Our SETTINGS are in by now.
    assert c.conn.remote_settings.get(h2.settings.SettingCodes.ENABLE_CONNECT_PROTOCOL, 0) == 0
    c.close()


@pytest.mark.parametrize("size", [10, 70_000, 1_000_000])
def test_request_bodies_with_and_without_a_length(sluice, backend, size):
    """With content-length the body goes on with it; without (allowed in HTTP/2), the pool
    gets it chunked. Bodies past a stream window (65,535) need WINDOW_UPDATEs, which sluice
    sends as the bytes leave for the backend."""
    sluice.start([backend], args=H2C)
    body = bytes((i * 7) % 251 for i in range(size))
    c = H2Client.plain(sluice.port)
    sid = c.request("POST", "/with-length", headers=[("content-length", str(size))], body=body)
    with_length = echoed(c.wait(sid)[sid])
    assert with_length["framing"] == "length" and with_length["body_len"] == size
    assert with_length["body_sha256"] == hashlib.sha256(body).hexdigest()
    sid = c.request("POST", "/no-length", body=body)
    without = echoed(c.wait(sid)[sid])
    assert without["framing"] == "chunked" and without["body_len"] == size
    assert without["body_sha256"] == hashlib.sha256(body).hexdigest()
    assert "content-length" not in fields(without)
    assert backend.errors == []
    c.close()


def test_cookie_crumbs_are_joined_for_http11(sluice, backend):
    """RFC 9113 §8.2.3: an HTTP/2 client may split Cookie into crumbs; HTTP/1.1 has one field."""
    sluice.start([backend], args=H2C)
    c = H2Client.plain(sluice.port)
    got = echoed(c.get("/", headers=[("cookie", "a=1"), ("x-other", "y"), ("cookie", "b=2"),
                                     ("cookie", "c=3")]))
    cookies = [v for k, v in got["headers"] if k.lower() == "cookie"]
    assert cookies == ["a=1; b=2; c=3"]
    c.close()


def test_te_trailers_and_connection_fields_never_reach_the_pool(sluice, backend):
    sluice.start([backend], args=H2C)
    c = H2Client.plain(sluice.port)
    got = echoed(c.get("/", headers=[("te", "trailers")]))
    assert "te" not in fields(got)
    c.close()


def test_a_chunked_response_becomes_data_frames_without_its_framing(sluice, make_backend):
    parts = [b"alpha-", b"beta-" * 3000, b"gamma"]
    backend = make_backend(chunked(parts, headers=[("Connection", "keep-alive, X-Hop"),
                                                   ("X-Hop", "1"), ("X-Kept", "2")]))
    sluice.start([backend], args=H2C)
    c = H2Client.plain(sluice.port)
    r = c.get("/")
    assert r.status == 200 and r.body == b"".join(parts)
    names = r.names()
    for hop in ("transfer-encoding", "connection", "keep-alive", "x-hop"):
        assert hop not in names
    assert r.header("x-kept") == "2"
    c.close()


def test_a_large_response_follows_a_small_client_window(sluice, make_backend):
    """The client gives a 16 KiB window and acknowledges slowly: the 2 MB body still arrives
    whole, paced by the client (flow control ties sluice's reads from the backend to it)."""
    body = bytes(i % 256 for i in range(2_000_000))
    backend = make_backend(fixed(200, body=body))
    sluice.start([backend], args=H2C)
    c = H2Client.plain(sluice.port, window=16_384)
    r = c.get("/big")
    assert r.status == 200 and len(r.body) == len(body) and r.body == body
    c.close()


def test_failures_and_local_responses_are_framed_for_http2(sluice):
    """A pool with nothing listening is a 502 with sluice's text; a HEAD gets the head only."""
    sluice.start([f"127.0.0.1:{free_port()}"], args=H2C)
    c = H2Client.plain(sluice.port)
    r = c.get("/")
    assert r.status == 502 and b"502 Bad Gateway" in r.body
    assert r.header("content-type") == "text/plain"
    assert int(r.header("content-length")) == len(r.body)
    sid = c.request("HEAD", "/")
    head = c.wait(sid)[sid]
    assert head.status == 502 and head.body == b""
    # The connection carries on after failures.
    assert c.get("/again").status == 502
    c.close()


def test_routes_local_responses_and_404_over_http2(sluice, backend, tmp_path):
    path = write_zon(tmp_path / "routes.zon", {
        "listeners": [{"listen": "127.0.0.1:0", "http2": True}],
        "pools": {"app": {"backends": [backend.address]}},
        "routes": [
            {"path_prefix": "/hello", "respond": {"status": 200, "body": "hi there\n",
                                                  "headers": {"Cache-Control": "no-store", "Keep-Alive": "timeout=5"}}},
            {"path_prefix": "/moved", "redirect": {"status": 301, "location": "https://example.com/new"}},
            {"path_prefix": "/app", "pool": "app"},
        ],
    })
    sluice.start_config(path)
    c = H2Client.plain(sluice.port)
    r = c.get("/hello")
    assert r.status == 200 and r.body == b"hi there\n"
    # The route's fields, names lowercased; what HTTP/1.1 means for the connection dropped.
    assert r.header("cache-control") == "no-store" and r.header("content-length") == "9"
    assert "connection" not in r.names() and "keep-alive" not in r.names()
    sid = c.request("HEAD", "/hello")
    head = c.wait(sid)[sid]
    assert head.status == 200 and head.body == b"" and head.header("content-length") == "9"
    moved = c.get("/moved")
    assert moved.status == 301 and moved.header("location") == "https://example.com/new"
    assert moved.header("content-length") == "0" and moved.body == b""
    missing = c.get("/nowhere")
    assert missing.status == 404
    assert echoed(c.get("/app/x"))["target"] == "/app/x"
    c.close()


def test_alpn_offers_h2_on_https_listeners_by_default(sluice, backend):
    sluice.start([backend], args=cert_args("ecdsa"))
    c = H2Client.tls(sluice.port, alpn_context())
    got = echoed(c.get("/tls"))
    assert fields(got)["x-forwarded-proto"] == "https"
    c.close()
    # A client offering HTTP/1.1 only still gets it.
    import ssl
    raw = alpn_context(("http/1.1",)).wrap_socket(__import__("socket").create_connection(("127.0.0.1", sluice.port)))
    assert raw.selected_alpn_protocol() == "http/1.1"
    raw.close()


def test_http2_off_keeps_alpn_to_http11(sluice, backend):
    sluice.start([backend], args=cert_args("ecdsa") + ["--http2", "off"])
    import socket
    sock = alpn_context().wrap_socket(socket.create_connection(("127.0.0.1", sluice.port)))
    assert sock.selected_alpn_protocol() == "http/1.1"
    sock.close()


def test_curl_speaks_http2_to_sluice(sluice, backend):
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("curl is not installed")
    sluice.start([backend], args=cert_args("ecdsa") + H2C)
    out = subprocess.run([curl, "-sk", "--http2", "-o", "/dev/null", "-w", "%{http_version} %{http_code}",
                          f"https://127.0.0.1:{sluice.port}/curl"], capture_output=True, text=True, timeout=20)
    assert out.stdout == "2 200", out
    # curl 7.88 cannot reuse a prior-knowledge connection for a second URL (curl #10634),
    # so one URL per run here.
    out = subprocess.run([curl, "-s", "--http2-prior-knowledge", "-o", "/dev/null", "-w",
                          "%{http_version} %{http_code}", f"http://127.0.0.1:{sluice.port}/h2c"],
                         capture_output=True, text=True, timeout=20)
    # The plain listener here is the HTTPS one: prior knowledge must fail the handshake.
    assert out.stdout != "2 200"


def test_curl_prior_knowledge_on_a_plain_listener(sluice, backend):
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("curl is not installed")
    sluice.start([backend], args=H2C)
    for path in ("/one", "/two"):
        out = subprocess.run([curl, "-s", "--http2-prior-knowledge", f"http://127.0.0.1:{sluice.port}{path}"],
                             capture_output=True, timeout=20)
        assert json.loads(out.stdout)["target"] == path
    # HTTP/1.1 still works on the same listener.
    assert request(sluice.port, "GET", "/h1").status == 200


def test_drain_finishes_streams_in_flight(sluice, make_backend):
    """SIGTERM while a stream is with the backend: GOAWAY (NO_ERROR, naming the last stream
    taken), the stream's response completes, then the connection closes and sluice exits.
    curl is the client: the `h2` package treats any GOAWAY as the end of the connection and
    refuses the frames after it, which RFC 9113 §6.8 allows."""
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("curl is not installed")
    backend = make_backend(slow_head(0.8, then=echo()))
    sluice.start([backend], args=H2C)
    run = subprocess.Popen([curl, "-s", "--http2-prior-knowledge", "-w", "\n%{http_version} %{http_code}",
                            f"http://127.0.0.1:{sluice.port}/slow"], stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 5
    while not backend.requests and time.monotonic() < deadline:
        time.sleep(0.02)
    sluice.signal(signal.SIGTERM)
    out, _ = run.communicate(timeout=20)
    body, status = out.rsplit("\n", 1)
    assert status == "2 200" and json.loads(body)["target"] == "/slow"
    assert run.returncode == 0
    assert sluice.wait(10) == 0


def test_the_goaway_survives_frames_the_client_sends_after_it(sluice, backend):
    """An idle connection's GOAWAY goes out and the session is over: sluice half-closes and
    lingers rather than closing, so a frame the client sends before it reads (a PING here; a
    new stream in the simulator's seed 51) does not turn the close into a reset, which would
    destroy the GOAWAY in the client's receive queue (RFC 9113 §6.8)."""
    sluice.start([backend], args=H2C + ["--client-idle-timeout", "500ms"])
    c = H2Client.plain(sluice.port)
    assert c.get("/first").status == 200
    time.sleep(1.2)  # Past the idle timeout: the GOAWAY waits, unread, in the client's queue.
    c.conn.ping(b"12345678")
    c.flush()
    time.sleep(0.3)  # Past the frame's arrival at sluice.
    c.read_until_closed()
    assert c.goaway is not None and c.goaway.error_code == 0, c.goaway
    c.close()


def wait_buffers_parked(sluice, what):
    deadline = time.monotonic() + 5
    while sluice.stats()["buffers_in_use"] != 0:
        assert time.monotonic() < deadline, f"the idle {what} connection kept its buffers"
        time.sleep(0.2)


@pytest.mark.parametrize("tls", [False, True], ids=["h2c", "tls"])
def test_an_idle_http2_connection_gives_its_buffers_back_and_then_serves_again(sluice, backend, tls):
    """After the hot second with no stream, an HTTP/2 connection holds no buffer of the pool
    (its read buffer and, over TLS, both record buffers went back), as an idle HTTP/1.1
    connection's do; a PING and the next streams are answered on the same connection."""
    args = (cert_args("ecdsa") if tls else H2C) + ["--client-idle-timeout", "10s"]
    sluice.start([backend], args=args)
    c = H2Client.tls(sluice.port, alpn_context()) if tls else H2Client.plain(sluice.port)
    try:
        assert echoed(c.get("/before"))["target"] == "/before"
        wait_buffers_parked(sluice, "h2")
        c.conn.ping(b"parked!!")
        c.flush()
        sids = [c.request("GET", f"/after/{i}") for i in range(3)]
        got = c.wait(*sids)
        assert sorted(echoed(got[s])["target"] for s in sids) == [f"/after/{i}" for i in range(3)]
        wait_buffers_parked(sluice, "h2")  # And again, after the second burst.
        assert echoed(c.get("/again"))["target"] == "/again"
    finally:
        c.close()


def test_a_parked_http2_connection_still_times_out_with_goaway(sluice, backend):
    """The idle timeout counts from the last stream, parked or not: GOAWAY (no error), then
    the close, with the buffers taken back only to send it."""
    sluice.start([backend], args=H2C + ["--client-idle-timeout", "2s"])
    c = H2Client.plain(sluice.port)
    assert c.get("/first").status == 200
    start = time.monotonic()
    wait_buffers_parked(sluice, "h2")
    c.read_until_closed()
    assert c.goaway is not None and c.goaway.error_code == 0, c.goaway
    assert time.monotonic() - start > 1.2  # Not at the end of the hot second.
    c.close()


@pytest.mark.parametrize("tls", [False, True], ids=["h2c", "tls"])
def test_a_parked_http2_connection_is_sent_away_by_the_drain(sluice, backend, tls):
    """SIGTERM with a parked connection: its buffers are taken back to write the GOAWAY
    (over TLS, sealed into a record), then it closes and sluice exits."""
    args = (cert_args("ecdsa") if tls else H2C) + ["--client-idle-timeout", "10s"]
    sluice.start([backend], args=args)
    c = H2Client.tls(sluice.port, alpn_context()) if tls else H2Client.plain(sluice.port)
    assert c.get("/first").status == 200
    wait_buffers_parked(sluice, "h2")
    sluice.signal(signal.SIGTERM)
    c.read_until_closed()
    assert c.goaway is not None and c.goaway.error_code == 0, c.goaway
    c.close()
    assert sluice.wait(10) == 0


def test_a_preface_completed_during_the_drain_is_sent_away(sluice, backend):
    """SIGTERM while a plain connection's preface is half there: to sluice it is still an
    HTTP/1.1 connection waiting for its head, which the drain lets finish. When the preface
    completes, the session starts with a GOAWAY (NO_ERROR), and sluice exits without waiting
    for the drain deadline, however many streams the client would go on to open."""
    sluice.start([backend], args=H2C)
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    opening = conn.data_to_send()
    sock = socket.create_connection(("127.0.0.1", sluice.port), timeout=5)
    sock.sendall(opening[:10])
    time.sleep(0.3)
    sluice.signal(signal.SIGTERM)
    time.sleep(0.3)
    sock.sendall(opening[10:])
    goaway = None
    deadline = time.monotonic() + 5
    while goaway is None and time.monotonic() < deadline:
        data = sock.recv(65536)
        if not data:
            break
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.ConnectionTerminated):
                goaway = event
        sock.sendall(conn.data_to_send())
    assert goaway is not None and goaway.error_code == 0, goaway
    sock.close()
    assert sluice.wait(5) == 0


def test_a_shut_stream_window_does_not_time_the_backend_out(sluice, make_backend):
    """The backend answers at once, and the client keeps its stream window (16 bytes) shut for
    longer than the upstream response timeout: only the client is being waited for, so no
    upstream deadline runs, and the whole body arrives once the client reads on."""
    body = bytes(range(256)) * 40
    backend = make_backend(fixed(body=body))
    sluice.start([backend], args=H2C + ["--upstream-response-timeout", "300ms", "--upstream-body-timeout", "300ms"])
    c = H2Client.plain(sluice.port, window=16, auto_ack=False)
    sid = c.request("GET", "/slow-reader")
    deadline = time.monotonic() + 5
    while not c.responses[sid].body and time.monotonic() < deadline:
        c.pump_once()
    time.sleep(1.0)  # The window stays shut past both upstream timeouts.
    c.conn.acknowledge_received_data(len(c.responses[sid].body), sid)
    c.auto_ack = True
    c.flush()
    r = c.wait(sid)[sid]
    assert r.reset is None and r.status == 200, r
    assert r.body == body
    c.close()


def test_a_window_kept_shut_past_the_client_idle_timeout_resets_the_stream(sluice, make_backend):
    """The HTTP/2 slow read: the client keeps its stream window (16 bytes) shut and sends PINGs
    meanwhile. Those are not progress: once no DATA went out for the client idle timeout, the
    stream is reset (CANCEL), as an HTTP/1.1 client that does not read is closed; the
    connection serves on."""
    body = bytes(range(256)) * 40
    backend = make_backend(fixed(body=body))
    sluice.start([backend], args=H2C + ["--client-idle-timeout", "500ms"])
    c = H2Client.plain(sluice.port, window=16, auto_ack=False)
    sid = c.request("GET", "/never-reads")
    deadline = time.monotonic() + 3
    c.sock.settimeout(0.05)
    while not c.responses[sid].ended and time.monotonic() < deadline:
        time.sleep(0.1)  # Ten PINGs a second: far under the PING flood limit.
        c.conn.ping(b"12345678")
        c.flush()
        try:
            while c.pump_once():
                pass
        except socket.timeout:
            pass
    c.sock.settimeout(5)
    r = c.responses[sid]
    assert r.reset == h2.errors.ErrorCodes.CANCEL, r
    assert len(r.body) < len(body)
    c.auto_ack = True
    assert c.get("/after").status == 200
    c.close()


def test_the_drains_goaway_names_no_half_sent_stream(sluice, backend):
    """SIGTERM while a stream's HEADERS are half there: nghttp2 counts the stream as processed,
    but sluice has not taken it, so the GOAWAY names the stream before it (1), and the client
    knows stream 3 may be sent again elsewhere."""
    sluice.start([backend], args=H2C)
    c = H2Client.plain(sluice.port)
    assert c.get("/first").status == 200
    c.conn.send_headers(3, [(":method", "POST"), (":path", "/half"), (":scheme", "http"),
                            (":authority", "x")], end_stream=True)
    frame = c.conn.data_to_send()
    c.sock.sendall(frame[:10])  # The frame's header and one byte of its block.
    time.sleep(0.3)
    sluice.signal(signal.SIGTERM)
    c.read_until_closed()
    assert c.goaway is not None and c.goaway.error_code == 0, c.goaway
    assert c.goaway.last_stream_id == 1, c.goaway
    assert sluice.wait(5) == 0


def test_a_rapid_reset_client_is_sent_away(sluice, backend):
    """CVE-2023-44487: streams opened and reset at once, hundreds a second: GOAWAY
    ENHANCE_YOUR_CALM, and the worker keeps serving others."""
    admin_port = start_with_admin(sluice, [backend], args=H2C)
    c = H2Client.plain(sluice.port)
    for _ in range(300):
        sid = c.conn.get_next_available_stream_id()
        c.conn.send_headers(sid, [(":method", "GET"), (":path", "/"), (":scheme", "http"),
                                  (":authority", "x")])
        c.conn.reset_stream(sid)
    try:
        c.flush()
    except OSError:
        pass
    c.read_until_closed()
    assert c.goaway is not None and c.goaway.error_code == 0xB  # ENHANCE_YOUR_CALM
    other = H2Client.plain(sluice.port)
    assert other.get("/fine").status == 200
    other.close()
    metrics = scrape(admin_port)
    assert value(metrics, "sluice_http2_reset_floods_total") == 1
    assert value(metrics, "sluice_http2_connections_total") == 2
    assert value(metrics, "sluice_http2_streams_total") >= 1


def test_streams_allocate_nothing_after_start_up(sluice, backend):
    sluice.start([backend], args=H2C)
    for _ in range(3):
        c = H2Client.plain(sluice.port)
        sids = [c.request("POST", f"/p/{i}", body=b"x" * 1000) for i in range(50)]
        for r in c.wait(*sids).values():
            assert r.status == 200
        c.close()
    sluice.stop()
    assert sluice.exit_allocations() == 0


def test_the_access_log_says_http2(sluice, backend, tmp_path):
    log = tmp_path / "access.log"
    sluice.start([backend], args=H2C + ["--access-log", str(log)])
    c = H2Client.plain(sluice.port)
    assert c.get("/logged").status == 200
    c.close()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and "/logged" not in (log.read_text() if log.exists() else ""):
        time.sleep(0.1)
    line = next(ln for ln in log.read_text().splitlines() if "/logged" in ln)
    assert '"GET /logged HTTP/2.0" 200' in line


def test_a_body_without_a_length_is_held_to_the_limit(sluice, backend):
    """HTTP/2 lets a body come without content-length; `--request-body-max` counts it as it
    arrives: 413 once past, and the connection serves on."""
    sluice.start([backend], args=H2C + ["--request-body-max", "100KiB"])
    c = H2Client.plain(sluice.port)
    sid = c.request("POST", "/big", body=b"y" * 300_000)
    r = c.wait(sid)[sid]
    assert r.status == 413
    assert sum(len(q.body) for q in backend.requests) < 300_000
    assert c.get("/next").status == 200
    c.close()


def test_a_stalled_request_body_times_out_with_408(sluice, backend):
    """A stream whose body stops arriving holds nothing past the client idle timeout."""
    sluice.start([backend], args=H2C + ["--client-idle-timeout", "500ms"])
    c = H2Client.plain(sluice.port)
    sid = c.request("POST", "/stall", body=b"z" * 1000, end_stream=False)
    r = c.wait(sid, timeout=10)[sid]
    assert r.status == 408, r
    assert c.get("/after").status == 200  # the connection serves on
    c.close()


def test_handlers_read_http2_bodies_and_proxy_them(sluice, make_backend, tmp_path):
    """A handler behind an HTTP/2 stream: `request.body` is the bare data (with or without a
    length), and `Response.proxy` sends the body it read on to the pool whole."""
    from test_handlers import BODY_JS, BODY_SITE, write
    backend = make_backend(echo())
    write(tmp_path, "body.js", BODY_JS)
    config = tmp_path / "site.zon"
    config.write_text(BODY_SITE.replace("BACKEND", backend.address)
                      .replace('.listen = "127.0.0.1:0",', '.listen = "127.0.0.1:0",\n    .http2 = .on,', 1))
    sluice.start_config(config)
    c = H2Client.plain(sluice.port)
    text = "héllo wörld".encode()
    for headers in ([("content-length", str(len(text)))], []):
        sid = c.request("POST", "/echo", headers=headers, body=text)
        r = c.wait(sid)[sid]
        assert r.status == 200 and json.loads(r.body) == {"body": "héllo wörld", "length": 11, "method": "POST"}, r
    for headers, framing in (([("content-length", "3000")], "length"), ([], "chunked")):
        sid = c.request("POST", "/proxy", headers=headers, body=b"z" * 3000)
        got = echoed(c.wait(sid)[sid])
        assert (got["target"], got["body_len"], got["framing"]) == ("/sent-on", 3000, framing)
    sid = c.request("POST", "/echo", body=b"q" * 5000)  # over the handler's body_max (4 KiB)
    assert c.wait(sid)[sid].status == 413
    c.close()


def test_interim_responses_are_relayed_as_headers(sluice, make_sluice, make_backend):
    """A backend's 100 Continue (the client sent `expect: 100-continue`, which goes on) and 103
    Early Hints reach an HTTP/2 client as HEADERS without END_STREAM, before the final
    response."""
    from backends import expect_100, raw_response
    backend = make_backend(expect_100())
    sluice.start([backend], args=H2C)
    c = H2Client.plain(sluice.port)
    sid = c.request("POST", "/upload", headers=[("expect", "100-continue"), ("content-length", "5")],
                    body=b"hello")
    r = c.wait(sid)[sid]
    assert echoed(r)["body"] == "hello"
    informational = [e for e in c.events if type(e).__name__ == "InformationalResponseReceived"]
    assert [dict(e.headers)[":status"] for e in informational] == ["100"]
    c.close()
    hints = make_backend(raw_response(b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n"
                                      b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", close=False))
    other = make_sluice().start([hints], args=H2C)
    c = H2Client.plain(other.port)
    r = c.get("/")
    assert r.status == 200 and r.body == b"ok"
    informational = [e for e in c.events if type(e).__name__ == "InformationalResponseReceived"]
    assert [(dict(e.headers)[":status"], dict(e.headers)["link"]) for e in informational] == [
        ("103", "</s.css>; rel=preload")]
    c.close()


def test_header_rules_and_request_ids_apply_to_http2(sluice, make_backend):
    """The route's rules (README, "Header rules") for a stream as for HTTP/1.1: request fields
    set before the pool sees them, response fields set and removed before the client does."""
    backend = make_backend(echo(extra_headers=[("Server", "app/1.0"), ("X-Powered-By", "php")]))
    sluice.start([backend], args=H2C + [
        "--request-header", "X-Seen-By: sluice $scheme",
        "--response-header", "Strict-Transport-Security: max-age=31536000",
        "--remove-response-header", "X-Powered-By",
        "--request-id", "X-Request-Id"])
    c = H2Client.plain(sluice.port)
    r = c.get("/rules")
    seen = fields(echoed(r))
    assert seen["x-seen-by"] == "sluice http"
    assert len(seen["x-request-id"]) == 32
    assert r.header("strict-transport-security") == "max-age=31536000"
    assert r.header("x-powered-by") is None and r.header("server") == "app/1.0"
    c.close()


TRAILERS = [("Grpc-Status", "0"), ("X-Checksum", "abc")]


def test_trailers_reach_an_h2_client_that_asked_for_them(sluice, make_backend):
    """A chunked response's trailer section becomes the stream's closing HEADERS when the
    client sent `te: trailers` (names lowercased); without it, the section is dropped as for
    any client that did not ask."""
    b = make_backend(chunked([b"hello ", b"world"], trailers=TRAILERS))
    sluice.start([b], args=H2C)
    c = H2Client.plain(sluice.port)
    r = c.get("/t", headers=[("te", "trailers")])
    assert r.status == 200 and r.body == b"hello world"
    assert r.trailers == [("grpc-status", "0"), ("x-checksum", "abc")], r.trailers
    r = c.get("/t")
    assert r.status == 200 and r.body == b"hello world" and r.trailers == []
    c.close()


def test_trailers_after_an_empty_body_still_arrive(sluice, make_backend):
    """gRPC's answer to a failed call is often trailers alone: the empty body still ends with
    them, not with a bare END_STREAM on the head."""
    b = make_backend(chunked([], trailers=[("grpc-status", "5"), ("grpc-message", "not found")]))
    sluice.start([b], args=H2C)
    c = H2Client.plain(sluice.port)
    r = c.get("/t", headers=[("te", "trailers")])
    assert r.status == 200 and r.body == b""
    assert r.trailers == [("grpc-status", "5"), ("grpc-message", "not found")], r.trailers
    c.close()


def grpc_frame(payload: bytes) -> bytes:
    return b"\x00" + len(payload).to_bytes(4, "big") + payload


class GrpcOverHttp11:
    """A gRPC service on an HTTP/1.1 hop: reads the request's gRPC messages (sluice sends the
    h2 body chunked), answers each unary call with its payload reversed, in a chunked body whose
    trailers carry grpc-status, as a gRPC server does in HTTP/2 trailers."""

    def on_connect(self, conn):
        return True

    def on_head(self, conn, req):
        pass

    def on_request(self, conn, req):
        body = req.body
        assert body[0] == 0 and int.from_bytes(body[1:5], "big") == len(body) - 5, body
        if req.target.endswith("/Fail"):
            trailers = [("grpc-status", "7"), ("grpc-message", "denied")]
            out = b""
        else:
            trailers = [("grpc-status", "0")]
            message = grpc_frame(body[5:][::-1])
            out = f"{len(message):x}\r\n".encode() + message + b"\r\n"
        conn.send_head(200, [("Content-Type", "application/grpc"), ("Transfer-Encoding", "chunked")])
        conn.send(out + b"0\r\n" + b"".join(f"{k}: {v}\r\n".encode() for k, v in trailers) + b"\r\n")
        conn.responses_sent += 1
        return True


def test_grpc_unary_calls_through_an_http11_hop(sluice, make_backend):
    """grpcio's own client, over h2c to sluice, to a gRPC service behind an HTTP/1.1 hop: the
    call's status comes from the relayed trailers, both for a success and for an error."""
    grpc = pytest.importorskip("grpc")
    b = make_backend(GrpcOverHttp11())
    sluice.start([b], args=H2C)
    with grpc.insecure_channel(f"127.0.0.1:{sluice.port}") as channel:
        echo_call = channel.unary_unary("/test.Echo/Reverse")
        for payload in (b"hello", b"x" * 100_000):
            assert echo_call(payload, timeout=10) == payload[::-1]
        with pytest.raises(grpc.RpcError) as failed:
            channel.unary_unary("/test.Echo/Fail")(b"x", timeout=10)
        assert failed.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert failed.value.details() == "denied"
    seen = b.requests[0]
    assert seen.header("content-type") == "application/grpc" and seen.framing == "chunked"
