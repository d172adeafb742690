"""HTTP/2 to backends: streams the member did not process are sent again, whatever their
method (RFC 9113 §8.7). A stream reset with REFUSED_STREAM, and one above the last stream a
GOAWAY says was taken, never reached the application: a POST is as safe to send again as a
GET. Members are hyper-h2 servers (h2member.py); every test runs once per I/O backend.
"""

import threading
import time

import pytest

from client import request
from h2client import H2Client
from h2member import H2Member
from test_admin import scrape, start_with_admin, value

ARGS = ["--backend-protocol", "h2c", "--tries", "1"]


@pytest.fixture
def member():
    made = H2Member("A")
    yield made
    made.close()


def posts(member, path):
    return [r for r in member.requests if r[":path"] == path and r[":method"] == "POST"]


@pytest.mark.parametrize("how", ["refused_stream", "goaway"])
def test_an_unprocessed_post_is_sent_again_once(sluice, member, how):
    """With one try allowed, the POST still succeeds: the replay of an unprocessed stream is
    not a retry (counted with the stale-connection replays)."""
    admin = start_with_admin(sluice, [member.address], args=ARGS)
    (member.refusals if how == "refused_stream" else member.goaways)["/submit"] = 1
    r = request(sluice.port, "POST", "/submit", body=b"order=1")
    assert r.status == 200 and r.body == b"A", (r.status, r.body)
    assert len(posts(member, "/submit")) == 2
    assert value(scrape(admin), "sluice_upstream_stale_retries_total", pool="default") == 1


def test_a_stream_refused_twice_is_not_sent_a_third_time(sluice, member):
    """Once only: a member that keeps refusing gets a 502, not a loop."""
    sluice.start([member.address], args=ARGS)
    member.refusals["/submit"] = 5
    r = request(sluice.port, "POST", "/submit", body=b"order=1")
    assert r.status == 502, (r.status, r.body)
    assert len(posts(member, "/submit")) == 2


def test_a_member_that_takes_one_stream_at_a_time_gets_one_at_a_time(sluice):
    """Requests that arrive together wait for the member's SETTINGS before any stream is opened,
    then for a free stream: none is refused, none breaks the connection, all are answered
    (the simulator found 502s here when streams were opened before the limit was known)."""
    member = H2Member("A", max_streams=1)
    try:
        sluice.start([member.address], args=ARGS)
        results = []

        def one(i):
            results.append(request(sluice.port, "POST", f"/one/{i}", body=b"x" * 100).status)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(results) == [200] * 8, results
        assert len(posts_under(member, "/one/")) == 8
        assert member.streams_open_max == 1
    finally:
        member.close()


def test_at_its_connection_cap_requests_queue_for_the_members_streams(sluice):
    """One connection allowed to the member, one stream on it: requests that arrive together
    queue for that stream in turn (as an HTTP/1.1 pool's requests would be shed, 503, once
    its connection is busy: multiplexing promises more)."""
    member = H2Member("A", max_streams=1)
    try:
        sluice.start([f"{member.address},max-conns=1"], args=ARGS)
        results = []

        def one(i):
            results.append(request(sluice.port, "GET", f"/q/{i}").status)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(results) == [200] * 6, results
        assert member.streams_open_max == 1
    finally:
        member.close()


def posts_under(member, prefix):
    return [r for r in member.requests if r[":path"].startswith(prefix)]


def test_a_client_that_leaves_mid_stream_is_not_charged_to_the_member(sluice, member):
    """An HTTP/2 client closes its connection while its three streams wait at the member: each
    backend stream is reset with CANCEL, none is counted as the member's failure (no 502 or
    504 tallied, nothing that could eject it), and the shared connection serves on. (An
    HTTP/1.1 client's close is not watched for while its response is awaited, as HAProxy's
    default without `option abortonclose`.)"""
    admin = start_with_admin(sluice, [member.address], args=ARGS + ["--http2", "on"])
    member.held.add("/hold")
    assert request(sluice.port, "GET", "/first").status == 200
    c = H2Client.plain(sluice.port)
    for _ in range(3):
        c.request("GET", "/hold")
    deadline = time.monotonic() + 5
    while len([r for r in member.requests if r[":path"] == "/hold"]) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len([r for r in member.requests if r[":path"] == "/hold"]) == 3
    c.sock.close()
    deadline = time.monotonic() + 5
    while len(member.resets) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.2)
    assert member.resets == [8] * 3, member.resets  # CANCEL
    families = scrape(admin)
    assert (value(families, "sluice_upstream_errors_total", pool="default") or 0) == 0
    r = request(sluice.port, "GET", "/after")
    assert r.status == 200 and r.body == b"A", r


def test_a_client_sent_away_for_a_flood_is_not_charged_to_the_member(sluice, member):
    """sluice ends a client's connection itself (GOAWAY ENHANCE_YOUR_CALM after a PING flood)
    while its streams wait at the member: they are reset with CANCEL and, as for a client that
    left, nothing is counted against the member."""
    admin = start_with_admin(sluice, [member.address], args=ARGS + ["--http2", "on"])
    member.held.add("/hold")
    assert request(sluice.port, "GET", "/first").status == 200
    c = H2Client.plain(sluice.port)
    # Streams with request bodies still open (16 KiB sent, more to come), as a gRPC stream's.
    for _ in range(3):
        c.request("POST", "/hold", body=b"m" * 16384, end_stream=False)
    deadline = time.monotonic() + 5
    while len([r for r in member.requests if r[":path"] == "/hold"]) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    for i in range(400):
        c.conn.ping(i.to_bytes(8, "big"))
    c.flush()
    c.read_until_closed(timeout=5)
    assert c.goaway is not None and c.goaway.error_code == 11, c.goaway  # ENHANCE_YOUR_CALM
    deadline = time.monotonic() + 5
    while len(member.resets) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.2)
    assert member.resets == [8] * 3, member.resets
    assert (value(scrape(admin), "sluice_upstream_errors_total", pool="default") or 0) == 0
    r = request(sluice.port, "GET", "/after")
    assert r.status == 200 and r.body == b"A", r


def test_a_members_heads_reach_either_client_written_in_its_protocol(sluice, member):
    """A member's heads come as fields (no HTTP/1.1 text is made of them inside sluice), and
    each client's protocol writes them out: an Early Hints before the answer, a body with no
    length (chunked for HTTP/1.1), a head that ends the stream without a length (a
    `Content-Length: 0`), a 204 and a 304 whose framing fields are as HTTP/1.1 puts them, a
    HEAD's length, and the standard reason phrase, which HTTP/2 does not carry. A status
    outside 100 to 599 is a 502."""
    member.answers = {
        "/hints": [("headers", [(":status", "103"), ("link", "</s.css>; rel=preload")], False),
                   ("headers", [(":status", "200"), ("content-type", "text/plain")], False),
                   ("data", b"hel", False), ("data", b"lo", True)],
        "/empty": [("headers", [(":status", "200"), ("x-empty", "1")], True)],
        "/no-content": [("headers", [(":status", "204"), ("x-n", "1")], True)],
        "/not-modified": [("headers", [(":status", "304"), ("content-length", "99"), ("etag", '"e"')], True)],
        "/head": [("headers", [(":status", "200"), ("content-length", "5")], True)],
        "/odd": [("headers", [(":status", "600")], True)],
    }
    sluice.start([member.address], args=ARGS + ["--http2", "on"])

    hints = request(sluice.port, "GET", "/hints")
    assert [(i.status, i.reason, i.header("link")) for i in hints.interim] == [(103, "Early Hints", "</s.css>; rel=preload")]
    assert (hints.status, hints.reason, hints.framing, hints.body) == (200, "OK", "chunked", b"hello"), hints
    assert hints.header("content-type") == "text/plain"
    empty = request(sluice.port, "GET", "/empty")
    assert (empty.status, empty.framing, empty.header("content-length"), empty.header("x-empty")) == (200, "length", "0", "1"), empty
    no_content = request(sluice.port, "GET", "/no-content")
    assert (no_content.status, no_content.reason, no_content.header("x-n")) == (204, "No Content", "1"), no_content
    assert no_content.header("content-length") is None and no_content.header("transfer-encoding") is None
    not_modified = request(sluice.port, "GET", "/not-modified")
    assert (not_modified.status, not_modified.header("content-length"), not_modified.header("etag")) == (304, "99", '"e"')
    head = request(sluice.port, "HEAD", "/head")
    assert (head.status, head.header("content-length"), head.body) == (200, "5", b""), head
    odd = request(sluice.port, "GET", "/odd")
    assert odd.status == 502, odd

    client = H2Client.plain(sluice.port)
    try:
        answers = {path: client.request("GET", path) for path in ("/hints", "/empty", "/not-modified", "/odd")}
        client.wait(*answers.values())
        got = {path: client.responses[sid] for path, sid in answers.items()}
        assert (got["/hints"].status, got["/hints"].body, got["/hints"].header("content-type")) == (200, b"hello", "text/plain")
        assert (got["/empty"].status, got["/empty"].header("content-length"), got["/empty"].header("x-empty")) == (200, "0", "1")
        assert (got["/not-modified"].status, got["/not-modified"].header("etag")) == (304, '"e"')
        assert got["/odd"].status == 502
    finally:
        client.close()



def test_a_members_head_at_the_field_limit_is_taken_and_one_past_it_is_a_502(sluice, member):
    """The response field limit holds for a member's head as for an HTTP/1.1 backend's, the
    `content-length: 0` sluice adds to a head that ends its stream included: 8 fields then
    pass, and 8 that need the added one are a 502 (with nothing malformed sent)."""
    fields = [(f"x-{i}", str(i)) for i in range(8)]
    member.answers = {
        "/seven": [("headers", [(":status", "200")] + fields[:7], True)],
        "/eight": [("headers", [(":status", "200")] + fields, True)],
        "/eight-sized": [("headers", [(":status", "200"), ("content-length", "0")] + fields[:7], True)],
    }
    sluice.start([member.address], args=ARGS + ["--response-headers-count-max", "8"])
    seven = request(sluice.port, "GET", "/seven")
    assert (seven.status, seven.header("content-length"), seven.header("x-6")) == (200, "0", "6"), seven
    sized = request(sluice.port, "GET", "/eight-sized")
    assert (sized.status, sized.header("content-length"), sized.header("x-6")) == (200, "0", "6"), sized
    eight = request(sluice.port, "GET", "/eight")
    assert eight.status == 502, eight
    assert request(sluice.port, "GET", "/seven").status == 200  # The member still serves.


def test_a_members_body_without_length_reaches_an_h2_client_as_data_and_its_trailers_as_fields(sluice, member):
    """A member's body with no length goes to an HTTP/2 client as the data it was, ended by
    the member's stream (sluice hands it over unframed: docs/HTTP2.md); its trailers
    reach a client that sent `te: trailers` (framing and routing names left out, as from a
    chunked body) and no other. An HTTP/1.1 client gets the same body chunked, trailers in
    the trailer section when it asked. A stream the member resets mid-body is reset for the
    client, never ended as if whole."""
    body = bytes(range(256)) * 80  # 20 KiB: within the stream window sluice gives a member.
    member.answers = {
        "/trailers": [("headers", [(":status", "200"), ("content-type", "application/grpc")], False),
                      ("data", body[:1000], False), ("data", body[1000:], False),
                      ("headers", [("grpc-status", "0"), ("grpc-message", "fine"), ("host", "evil")], True)],
        "/cut": [("headers", [(":status", "200")], False), ("data", b"part", False), ("reset", 2, None)],
    }
    sluice.start([member.address], args=ARGS + ["--http2", "on"])
    client = H2Client.plain(sluice.port)
    try:
        asked = client.request("GET", "/trailers", headers=[("te", "trailers")])
        plain = client.request("GET", "/trailers")
        cut = client.request("GET", "/cut")
        got = client.wait(asked, plain, cut)
        assert (got[asked].status, got[asked].body == body, got[asked].reset) == (200, True, None)
        assert got[asked].trailers == [("grpc-status", "0"), ("grpc-message", "fine")], got[asked].trailers
        assert (got[plain].body == body, got[plain].trailers) == (True, [])
        assert got[cut].reset is not None, got[cut]
    finally:
        client.close()
    chunked = request(sluice.port, "GET", "/trailers", headers=[("TE", "trailers")])
    assert (chunked.status, chunked.framing, chunked.body == body) == (200, "chunked", True)
    assert chunked.trailers == [("grpc-status", "0"), ("grpc-message", "fine")], chunked.trailers



def test_a_members_body_without_length_is_compressed_for_either_client(sluice, member):
    """`--compress` on a member's body with no length: an HTTP/2 client gets it gzipped as
    DATA (the stream's body went over unframed, the compressor frames its output), an
    HTTP/1.1 client chunked; both decompress to the body."""
    import gzip
    body = b"compressible text " * 1000
    member.answers = {"/text": [("headers", [(":status", "200"), ("content-type", "text/plain")], False),
                                ("data", body, True)]}
    sluice.start([member.address], args=ARGS + ["--http2", "on", "--compress"])
    client = H2Client.plain(sluice.port)
    try:
        got = client.get("/text", headers=[("accept-encoding", "gzip")])
        assert (got.status, got.header("content-encoding")) == (200, "gzip"), got
        assert gzip.decompress(got.body) == body
    finally:
        client.close()
    h1 = request(sluice.port, "GET", "/text", headers=[("Accept-Encoding", "gzip")])
    assert (h1.status, h1.framing, h1.header("content-encoding")) == (200, "chunked", "gzip"), h1
    assert gzip.decompress(h1.body) == body
