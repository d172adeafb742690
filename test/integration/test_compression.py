"""Gzip of responses on their way to clients (`--compress`, `compression.*`, issue 24):
every body gunzips to exactly what the backend sent, whatever its framing and size and however
slowly the client reads; the connection stays usable after a compressed response; what nginx
leaves alone is left alone (HEAD, 204, 304, ranges, encoded bodies, no-transform, gzip;q=0,
unlisted types, short bodies, HTTP/1.0 with an unknown length); Vary and ETag are kept honest;
a reload turns it on and off, per route too; /metrics counts it; and a full set of compressor
slots means "pass as sent", counted. HTTP/2 streams carry the gzip bytes in DATA frames."""

import gzip
import random
import signal
import threading
import time

import pytest

from backends import Behaviour, chunked, close_delimited, fixed, route
from client import Client, Deadline, request, wait_until
from conftest import write_zon
from test_admin import ADMIN_RE, scrape, value
from test_reload import generation_re, RELOAD_WAIT
from test_routing import config

GZIP = [("Accept-Encoding", "gzip")]
HTML = ("Content-Type", "text/html; charset=utf-8")


def text_body(n: int, seed: int = 1) -> bytes:
    """`n` bytes of words: compressible, but not trivially (every window differs)."""
    rng = random.Random(seed)
    words = [b"sluice", b"gzip", b"window", b"chunk", b"deflate", b"backend", b"client",
             b"proxy", b"stream", b"buffer"]
    out = bytearray()
    while len(out) < n:
        out += rng.choice(words) + b"%d " % rng.randrange(1000)
    return bytes(out[:n])


BODY = text_body(20_000)
BIG = text_body(4 << 20, seed=2)
PARTS = [BODY[i:i + 3000] for i in range(0, len(BODY), 3000)]


def assert_gzipped(r, expected: bytes):
    """A compressed response: gzip, chunked, no Content-Length, Vary, the exact body."""
    assert r.status == 200, r
    assert r.header("content-encoding") == "gzip", r
    assert r.header("content-length") is None, r
    assert r.framing == "chunked", r
    assert "accept-encoding" in ",".join(r.header_all("vary")).lower(), r
    assert gzip.decompress(r.body) == expected
    assert len(r.body) < len(expected)


def assert_untouched(r, expected: bytes):
    assert r.header("content-encoding") is None, r
    assert r.body == expected, r


def backend_routes(make_backend):
    return make_backend(route({
        "/cl": fixed(200, [HTML], BODY),
        "/chunked": chunked(PARTS, delay=0, headers=[HTML]),
        "/close": close_delimited(BODY, headers=[HTML], delay=0.02),
        "/big": fixed(200, [("Content-Type", "text/plain")], BIG),
        "/bigchunked": chunked([BIG[i:i + 100_000] for i in range(0, len(BIG), 100_000)],
                               delay=0, headers=[("Content-Type", "text/plain")]),
    }))


def test_every_framing_round_trips_on_one_connection(sluice, make_backend):
    """Content-Length, chunked and close-delimited bodies gunzip to the backend's bytes, one
    after another on one keep-alive connection: the compressed close-delimited body goes out
    chunked, so even it leaves the client connection open."""
    b = backend_routes(make_backend)
    sluice.start([b], args=["--compress"])
    with Client(sluice.port, timeout=10) as c:
        for path in ["/cl", "/chunked", "/close", "/cl", "/chunked"]:
            assert_gzipped(c.request("GET", path, headers=GZIP), BODY)
        # Then an identity response on the same connection.
        r = c.request("GET", "/cl")
        assert_untouched(r, BODY)
        assert r.header("content-length") == str(len(BODY))


@pytest.mark.time_limit(60)
def test_a_multi_mebibyte_body_spans_many_windows(sluice, make_backend):
    """4 MiB, with a length and chunked: hundreds of windows, each its own chunk, gunzip to
    the original; nothing is spliced around the compressor."""
    b = backend_routes(make_backend)
    sluice.start([b], args=["--compress", "--splice-min", "1"])
    with Client(sluice.port, timeout=30) as c:
        for path in ["/big", "/bigchunked"]:
            r = c.request("GET", path, headers=GZIP, timeout=30)
            assert_gzipped(r, BIG)
            assert len(r.chunk_sizes) > 50, len(r.chunk_sizes)


@pytest.mark.time_limit(60)
def test_a_slow_reader_gets_every_byte_then_keeps_the_connection(sluice, make_backend):
    """A client with a small receive buffer that reads 16 KiB at a time with pauses: the
    compressed stream waits for it (backpressure, no buffering beyond a window) and arrives
    whole; the next request on that connection is answered."""
    noisy = random.Random(3).randbytes(3 << 20)  # Incompressible: as many bytes out as in.
    b = make_backend(route({"/noisy": fixed(200, [("Content-Type", "text/plain")], noisy)}))
    sluice.start([b], args=["--compress"])
    c = Client(sluice.port, timeout=30, rcvbuf=8192)
    try:
        c.send_request("GET", "/noisy", headers=GZIP)
        raw = bytearray()
        deadline = Deadline(40)
        while b"0\r\n\r\n" not in raw[-7:]:
            piece = c.read_some(timeout=deadline.check("slow read"))
            assert piece, "closed early"
            raw += piece
            if len(raw) < 600_000:
                time.sleep(0.002)
        head, _, body = bytes(raw).partition(b"\r\n\r\n")
        assert b"content-encoding: gzip" in head.lower(), head
        plain = gzip.decompress(dechunk(body))
        assert plain == noisy
        assert c.request("GET", "/noisy", headers=[("Accept-Encoding", "identity")],
                         timeout=30).body == noisy
    finally:
        c.close()


def dechunk(data: bytes) -> bytes:
    out = bytearray()
    at = 0
    while True:
        end = data.index(b"\r\n", at)
        size = int(data[at:end], 16)
        at = end + 2
        if size == 0:
            return bytes(out)
        out += data[at:at + size]
        at += size + 2


def test_what_is_left_alone(sluice, make_backend):
    """Each exclusion passes the body as sent, with its own framing: HEAD, 204, 304, 206 with
    Content-Range, a body already encoded, `no-transform`, `gzip;q=0`, no Accept-Encoding, a
    type not in the list, a body under min_length, and an HTTP/1.0 client of a chunked body.
    An HTTP/1.0 client of a body with a length gets it compressed (and a close)."""
    b = make_backend(route({
        "/cl": fixed(200, [HTML], BODY),
        "/chunked": chunked(PARTS, delay=0, headers=[HTML]),
        "/204": fixed(204, [HTML]),
        "/304": fixed(304, [HTML, ("ETag", '"v1"')]),
        "/206": fixed(206, [HTML, ("Content-Range", f"bytes 0-{len(BODY) - 1}/99999")], BODY),
        "/br": fixed(200, [HTML, ("Content-Encoding", "br")], BODY),
        "/nt": fixed(200, [HTML, ("Cache-Control", "public, no-transform")], BODY),
        "/png": fixed(200, [("Content-Type", "image/png")], BODY),
        "/small": fixed(200, [HTML], BODY[:255]),
    }))
    sluice.start([b], args=["--compress"])
    with Client(sluice.port, timeout=10) as c:
        r = c.request("HEAD", "/cl", headers=GZIP)
        assert r.header("content-encoding") is None and r.body == b"", r
        assert r.header("content-length") == str(len(BODY)), r
        assert c.request("GET", "/204", headers=GZIP).status == 204
        r = c.request("GET", "/304", headers=GZIP)
        assert r.status == 304 and r.header("content-encoding") is None
        assert r.header("etag") == '"v1"', r
        r = c.request("GET", "/206", headers=GZIP)
        assert r.status == 206
        assert_untouched(r, BODY)
        r = c.request("GET", "/br", headers=GZIP)
        assert r.header("content-encoding") == "br" and r.body == BODY
        for path in ["/nt", "/png", "/small"]:
            r = c.request("GET", path, headers=GZIP)
            assert_untouched(r, BODY[:255] if path == "/small" else BODY)
            assert not r.header_all("vary"), r
        # Refused by the client: passed, but a cache must know it varies.
        for headers in [[("Accept-Encoding", "gzip;q=0, identity")], [],
                        [("Accept-Encoding", "br")]]:
            r = c.request("GET", "/cl", headers=headers)
            assert_untouched(r, BODY)
            assert r.header("vary") == "Accept-Encoding", r
        assert_gzipped(c.request("GET", "/cl", headers=[("Accept-Encoding", "br, GZIP;q=0.5")]),
                       BODY)
    with Client(sluice.port, timeout=10) as c:
        r = c.request("GET", "/chunked", headers=GZIP, version="HTTP/1.0")
        assert_untouched(r, BODY)
        assert r.header("vary") == "Accept-Encoding", r
    with Client(sluice.port, timeout=10) as c:
        c.send_request("GET", "/cl", headers=GZIP, version="HTTP/1.0")
        raw = c.bsock.read_to_close(Deadline(10))
        head, _, body = raw.partition(b"\r\n\r\n")
        assert b"content-encoding: gzip" in head.lower(), head
        assert b"transfer-encoding" not in head.lower(), head
        assert gzip.decompress(body) == BODY


def test_vary_and_etag(sluice, make_backend):
    """A Vary that already names Accept-Encoding (or `*`) is not added to; another Vary gets
    Accept-Encoding beside it. A strong ETag becomes weak; a weak one passes as it is.
    Accept-Ranges is dropped from a gzipped response (as nginx does)."""
    b = make_backend(route({
        "/vary-ae": fixed(200, [HTML, ("Vary", "Accept-Encoding"), ("ETag", 'W/"w1"')], BODY),
        "/vary-star": fixed(200, [HTML, ("Vary", "*")], BODY),
        "/vary-cookie": fixed(200, [HTML, ("Vary", "Cookie"), ("ETag", '"s1"'),
                                    ("Accept-Ranges", "bytes"), ("Content-Encoding", "")], BODY),
    }))
    sluice.start([b], args=["--compress"])
    with Client(sluice.port, timeout=10) as c:
        r = c.request("GET", "/vary-ae", headers=GZIP)
        assert_gzipped(r, BODY)
        assert r.header_all("vary") == ["Accept-Encoding"], r
        assert r.header_all("etag") == ['W/"w1"'], r
        r = c.request("GET", "/vary-star", headers=GZIP)
        assert r.header("content-encoding") == "gzip", r
        assert r.header_all("vary") == ["*"], r
        assert gzip.decompress(r.body) == BODY
        r = c.request("GET", "/vary-cookie", headers=GZIP)
        assert_gzipped(r, BODY)
        assert sorted(r.header_all("vary")) == ["Accept-Encoding", "Cookie"], r
        assert r.header_all("etag") == ['W/"s1"'], r
        # Ranges of the gzip bytes are not served; the empty coding gave way to gzip.
        assert r.header("accept-ranges") is None, r
        assert r.header_all("content-encoding") == ["gzip"], r
        # Not compressed for this client: the ETag and Accept-Ranges are the backend's.
        r = c.request("GET", "/vary-cookie")
        assert r.header_all("etag") == ['"s1"'], r
        assert r.header("accept-ranges") == "bytes", r


def compression_config(backend, enabled, route_setting=None, admin_port=None):
    routes = [{"path_prefix": "/off/", "pool": "app", "compression": False},
              {"path_prefix": "/", "pool": "app"}]
    if route_setting is not None:
        routes[1]["compression"] = route_setting
    top = {"compression": {"enabled": enabled, "level": 6, "min_length": 100,
                           "types": "text/*"}}
    if admin_port is not None:
        top["admin"] = {"listen": f"127.0.0.1:{admin_port}"}
    return config({"app": [backend]}, routes, **top)


def test_reload_turns_compression_on_and_off(sluice, make_backend, tmp_path):
    """Off in the file: identity. A reload turns it on (a route that says `false` stays off);
    another turns the top level off and one route on; a third turns it all off."""
    b = make_backend(route({"/": fixed(200, [HTML], BODY)}))
    path = write_zon(tmp_path / "c.zon", compression_config(b, False))
    sluice.start_config(path)

    def get(target):
        return request(sluice.port, "GET", target, headers=GZIP, timeout=10)

    assert_untouched(get("/a"), BODY)
    for generation, (enabled, route_setting), expect in [
            (2, (True, None), {"/a": True, "/off/a": False}),
            (3, (False, True), {"/a": True, "/off/a": False}),
            (4, (False, None), {"/a": False, "/off/a": False})]:
        write_zon(path, compression_config(b, enabled, route_setting))
        mark = sluice.mark()
        sluice.signal(signal.SIGHUP)
        sluice.wait_for_line(generation_re(generation), RELOAD_WAIT, start=mark)
        for target, compressed in expect.items():
            r = get(target)
            if compressed:
                assert_gzipped(r, BODY)
            else:
                assert_untouched(r, BODY)


def test_a_bad_compression_setting_names_its_line(sluice_bin, tmp_path):
    """A mistake in the section is refused with the file, line and column."""
    import subprocess
    bad = tmp_path / "bad.zon"
    bad.write_text('.{\n    .listen = "127.0.0.1:0",\n    .compression = .{ .level = 12 },\n'
                   '    .pools = .{ .app = .{ .backends = .{"127.0.0.1:1"} } },\n}\n')
    done = subprocess.run([sluice_bin, "check", str(bad)], capture_output=True, text=True,
                          timeout=10)
    assert done.returncode != 0
    assert f"{bad}:3:" in done.stderr + done.stdout, done.stderr + done.stdout
    types = tmp_path / "types.zon"
    types.write_text('.{\n    .listen = "127.0.0.1:0",\n    .compression = .{\n'
                     '        .types = "Text/HTML",\n    },\n'
                     '    .pools = .{ .app = .{ .backends = .{"127.0.0.1:1"} } },\n}\n')
    done = subprocess.run([sluice_bin, "check", str(types)], capture_output=True, text=True,
                          timeout=10)
    assert done.returncode != 0
    assert f"{types}:4:" in done.stderr + done.stdout and "lowercase" in done.stderr, done.stderr


@pytest.mark.time_limit(60)
def test_metrics_count_and_a_full_set_of_slots_passes(sluice, make_backend):
    """With one slot per worker, a response that holds it (a slow chunked body) makes the next
    one pass as sent, counted; bytes in and out are counted when responses end."""
    slow = chunked([BODY[:5000]] * 6, delay=0.4, headers=[HTML])
    b = make_backend(route({"/slow": slow, "/cl": fixed(200, [HTML], BODY)}))
    sluice.start([b], args=["--compress", "--compress-slots", "1", "--admin", "127.0.0.1:0"])
    admin_port = int(sluice.wait_for_line(ADMIN_RE, timeout=5.0).group("port"))
    results = {}

    def slow_client():
        results["slow"] = request(sluice.port, "GET", "/slow", headers=GZIP, timeout=20)

    t = threading.Thread(target=slow_client)
    t.start()
    time.sleep(0.5)  # The slow response has its head out and holds the one slot.
    passed = request(sluice.port, "GET", "/cl", headers=GZIP, timeout=10)
    t.join(20)
    assert_untouched(passed, BODY)
    assert passed.header("vary") == "Accept-Encoding", passed
    assert_gzipped(results["slow"], BODY[:5000] * 6)
    assert_gzipped(request(sluice.port, "GET", "/cl", headers=GZIP, timeout=10), BODY)
    # The counters are added when the exchange ends, which may be just after the client has
    # its last byte: wait for them rather than race them.
    total_in = 30_000 + len(BODY)
    assert wait_until(lambda: value(scrape(admin_port), "sluice_compression_bytes_in_total") == total_in, 5.0)
    m = scrape(admin_port)
    assert value(m, "sluice_responses_compressed_total") == 2
    assert value(m, "sluice_compression_slots_full_total") == 1
    assert value(m, "sluice_compression_bytes_in_total") == total_in
    out = value(m, "sluice_compression_bytes_out_total")
    assert 0 < out < 30_000 + len(BODY)


@pytest.mark.time_limit(150)
def test_no_heap_allocations_per_compressed_response(sluice, make_backend):
    """Thousands of compressed responses (with a length, chunked, close-delimited) over a few
    connections leave heap_allocations_after_startup unchanged."""
    b = backend_routes(make_backend)
    sluice.start([b], args=["--compress"], workers=2)

    def load(count):
        errors = []

        def one(tid):
            try:
                with Client(sluice.port, timeout=10) as c:
                    for i in range(count):
                        path = ["/cl", "/chunked", "/close"][(i + tid) % 3]
                        r = c.request("GET", path, headers=GZIP)
                        assert gzip.decompress(r.body) == BODY
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(repr(e))

        ts = [threading.Thread(target=one, args=(tid,)) for tid in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
        assert not errors, errors[:3]

    load(50)
    before = sluice.stats()
    load(300)
    after = sluice.stats()
    key = "heap_allocations_after_startup"
    assert after[key] == before[key], (before, after)


class CutOff(Behaviour):
    """A text/html body with a Content-Length that stops half-way and is reset, or pauses
    there for a second (the client goes away meanwhile) before the rest."""

    def __init__(self, body, how):
        self.body, self.how = body, how

    def on_request(self, conn, req):
        conn.send_head(200, [HTML, ("Content-Length", str(len(self.body)))])
        conn.send(self.body[:len(self.body) // 2])
        if self.how == "reset":
            conn.sleep(0.1)
            conn.reset()
            return False
        conn.sleep(1.0)
        conn.send(self.body[len(self.body) // 2:])
        return False


@pytest.mark.time_limit(60)
def test_the_slot_comes_back_whichever_way_a_response_ends(sluice, make_backend):
    """With one slot: a backend reset mid-body, a client gone mid-body, and a chunked body with
    extensions and a trailer section (dropped: the client did not ask for it) each give the
    slot back: the next response is compressed again, never passed for a full set. A client
    that takes trailers (`TE: trailers`, as gRPC's do) gets the body as sent, with them."""
    b = make_backend(route({
        "/reset": CutOff(BIG[:400_000], "reset"),
        "/stall": CutOff(BIG[:400_000], "stall"),
        "/trailers": chunked(PARTS, delay=0, headers=[HTML], trailers=[("X-Sum", "1")],
                             extensions=[";a=1", ";b=\"x\""] + [""] * len(PARTS)),
        "/cl": fixed(200, [HTML], BODY),
    }))
    sluice.start([b], args=["--compress", "--compress-slots", "1"])
    with Client(sluice.port, timeout=10) as c:
        c.send_request("GET", "/reset", headers=GZIP)
        raw = c.bsock.read_to_close(Deadline(10))
        assert b"content-encoding: gzip" in raw.lower()
    assert_gzipped(request(sluice.port, "GET", "/cl", headers=GZIP, timeout=10), BODY)
    c = Client(sluice.port, timeout=10)
    c.send_request("GET", "/stall", headers=GZIP)
    assert c.read_some(timeout=5)
    c.close()  # Gone while the backend pauses: sluice finds out when it writes again.

    def compressed_again():
        r = request(sluice.port, "GET", "/cl", headers=GZIP, timeout=10)
        return r.header("content-encoding") == "gzip" and gzip.decompress(r.body) == BODY

    assert wait_until(compressed_again, 5.0, interval=0.1), "the slot never came back"
    with Client(sluice.port, timeout=10) as c:
        r = c.request("GET", "/trailers", headers=GZIP)
        assert_gzipped(r, BODY)
        assert r.trailers == [], r.trailers
        assert_gzipped(c.request("GET", "/cl", headers=GZIP), BODY)
        r = c.request("GET", "/trailers", headers=GZIP + [("TE", "trailers")])
        assert_untouched(r, BODY)
        assert r.trailers == [("X-Sum", "1")], r.trailers


@pytest.mark.time_limit(60)
def test_http2_streams_get_gzip_in_their_data_frames(sluice, make_backend):
    """HTTP/2 clients (h2c with prior knowledge): a compressed stream has content-encoding, no
    content-length, vary and a weak etag, and its DATA frames gunzip to the body, with a length,
    chunked and 4 MiB; concurrent streams on one connection each get their own; a client that
    does not take gzip gets the body as sent, with its length."""
    from h2client import H2Client
    b = make_backend(route({
        "/cl": fixed(200, [HTML, ("ETag", '"e1"')], BODY),
        "/chunked": chunked(PARTS, delay=0, headers=[HTML]),
        "/big": fixed(200, [("Content-Type", "text/plain")], BIG),
    }))
    sluice.start([b], args=["--compress", "--http2", "on"])
    c = H2Client.plain(sluice.port, timeout=30)
    try:
        ae = [("accept-encoding", "gzip")]
        r = c.get("/cl", headers=ae)
        assert r.status == 200 and r.header("content-encoding") == "gzip", r.headers
        assert r.header("content-length") is None, r.headers
        assert r.header("vary") == "Accept-Encoding" and r.header("etag") == 'W/"e1"', r.headers
        assert gzip.decompress(r.body) == BODY
        sids = [c.request("GET", path, headers=ae) for path in ["/chunked", "/big", "/cl"]]
        got = c.wait(*sids, timeout=30)
        for sid, expected in zip(sids, [BODY, BIG, BODY]):
            assert got[sid].header("content-encoding") == "gzip", got[sid].headers
            assert gzip.decompress(got[sid].body) == expected
        r = c.get("/cl")
        assert r.header("content-encoding") is None and r.body == BODY
        assert r.header("content-length") == str(len(BODY)) and r.header("etag") == '"e1"'
    finally:
        c.close()


def test_compress_types_on_the_command_line(sluice, make_backend, sluice_bin):
    """`--compress-types` replaces the default list as `compression.types` does in a file
    (`type/*` entries too); a malformed list is refused before start-up, saying why."""
    import subprocess
    b = make_backend(route({
        "/json": fixed(200, [("Content-Type", "application/json")], BODY),
        "/csv": fixed(200, [("Content-Type", "text/csv")], BODY),
        "/html": fixed(200, [HTML], BODY),
        "/xml": fixed(200, [("Content-Type", "application/xml")], BODY),
    }))
    sluice.start([b], args=["--compress", "--compress-types", "application/json text/*"])
    with Client(sluice.port, timeout=10) as c:
        for path in ["/json", "/csv", "/html"]:
            assert_gzipped(c.request("GET", path, headers=GZIP), BODY)
        assert_untouched(c.request("GET", "/xml", headers=GZIP), BODY)
    done = subprocess.run([sluice_bin, "--backend", "127.0.0.1:1", "--compress-types",
                           "Text/HTML"], capture_output=True, text=True, timeout=10)
    assert done.returncode != 0
    assert "--compress-types" in done.stderr and "lowercase" in done.stderr, done.stderr


@pytest.mark.time_limit(90)
def test_many_concurrent_responses_with_the_slots_full(sluice, make_backend):
    """Sixteen slow responses at once on one worker with four slots: each body arrives whole,
    gunzipped or as sent, the counters add up to sixteen, and the slots all come back."""
    slow = chunked([BODY[:5000]] * 8, delay=0.1, headers=[HTML])
    b = make_backend(route({"/slow": slow, "/cl": fixed(200, [HTML], BODY)}))
    sluice.start([b], args=["--compress", "--compress-slots", "4", "--admin", "127.0.0.1:0"])
    admin_port = int(sluice.wait_for_line(ADMIN_RE, timeout=5.0).group("port"))
    expected = BODY[:5000] * 8
    results, errors = [], []

    def one():
        try:
            results.append(request(sluice.port, "GET", "/slow", headers=GZIP, timeout=30))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    ts = [threading.Thread(target=one) for _ in range(16)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(40)
    assert not errors, errors[:3]
    gzipped = [r for r in results if r.header("content-encoding") == "gzip"]
    for r in gzipped:
        assert_gzipped(r, expected)
    for r in results:
        if r.header("content-encoding") is None:
            assert_untouched(r, expected)
    assert 1 <= len(gzipped) < 16, len(gzipped)
    m = scrape(admin_port)
    assert value(m, "sluice_responses_compressed_total") == len(gzipped)
    assert value(m, "sluice_compression_slots_full_total") == 16 - len(gzipped)
    # Every slot is free again: four responses at once are all compressed.
    again = []
    ts = [threading.Thread(target=lambda: again.append(
        request(sluice.port, "GET", "/slow", headers=GZIP, timeout=30))) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(40)
    assert len(again) == 4
    for r in again:
        assert_gzipped(r, expected)


def test_a_body_cut_off_mid_stream_gunzips_to_a_prefix(sluice, make_backend):
    """A backend that resets half-way through: each chunk sluice sent was flushed, so what the
    client got before the close decodes to the start of the body, byte for byte."""
    import zlib
    body = BIG[:400_000]
    b = make_backend(route({"/reset": CutOff(body, "reset")}))
    sluice.start([b], args=["--compress"])
    with Client(sluice.port, timeout=10) as c:
        c.send_request("GET", "/reset", headers=GZIP)
        raw = c.bsock.read_to_close(Deadline(10))
    head, _, rest = raw.partition(b"\r\n\r\n")
    assert b"content-encoding: gzip" in head.lower(), head
    assert not rest.endswith(b"0\r\n\r\n")  # Cut off: no last-chunk.
    data = bytearray()
    while b"\r\n" in rest:
        size_line, _, after = rest.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0 or len(after) < size + 2:
            break
        data += after[:size]
        rest = after[size + 2:]
    plain = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(bytes(data))
    assert len(plain) >= 20_000, len(plain)  # At least the first window.
    assert plain == body[:len(plain)]
