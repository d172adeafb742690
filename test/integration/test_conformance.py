"""Strict request parsing (RFC 9110/9112) and request smuggling.

Every malformed request in CASES must get its expected status, the connection must be
closed after the error response, and nothing of the request may reach the backend: for
errors in the head not a single byte; for errors in a chunked body (which sluice may
already be streaming) never a complete request. That last part is the smuggling proof.
"""

import time
from dataclasses import dataclass

import pytest

from backends import echo
from client import (BufferedSocket, Client, ConnectionClosed, Deadline, Echoed,
                    build_request, connect, read_response, readable)

HOST = b"Host: sluice.test\r\n"


@dataclass
class Case:
    id: str
    raw: bytes
    expected: tuple  # acceptable status codes; more than one only where the RFCs allow it
    where: str = "head"  # "head": no byte may reach the backend; "body": no full request
    why: str = ""


def _req(line: bytes, *fields: bytes, body: bytes = b"") -> bytes:
    return line + b"\r\n" + b"".join(f + b"\r\n" for f in fields) + b"\r\n" + body


GET = b"GET / HTTP/1.1"
POST = b"POST /upload HTTP/1.1"
TE_CHUNKED = b"Transfer-Encoding: chunked"
CHUNKED_BODY = b"5\r\nhello\r\n0\r\n\r\n"
H = HOST[:-2]

CASES = [
    # --- message framing: Content-Length / Transfer-Encoding (RFC 9112 6) ---
    Case("cl_and_te", _req(POST, H, b"Content-Length: 5", TE_CHUNKED, body=CHUNKED_BODY),
         (400,), why="9112 6.1: CL+TE is a smuggling vector; DESIGN: reject"),
    Case("te_and_cl", _req(POST, H, TE_CHUNKED, b"Content-Length: 5", body=CHUNKED_BODY),
         (400,)),
    Case("two_cl_equal", _req(POST, H, b"Content-Length: 5", b"Content-Length: 5",
                              body=b"hello"), (400,), why="DESIGN: repeated CL rejected"),
    Case("two_cl_different", _req(POST, H, b"Content-Length: 5", b"Content-Length: 6",
                                  body=b"hello!"), (400,)),
    Case("cl_plus_sign", _req(POST, H, b"Content-Length: +5", body=b"hello"), (400,)),
    Case("cl_list_5_5", _req(POST, H, b"Content-Length: 5, 5", body=b"hello"), (400,)),
    Case("cl_negative", _req(POST, H, b"Content-Length: -1", body=b"hello"), (400,)),
    Case("cl_not_a_number", _req(POST, H, b"Content-Length: abc", body=b"hello"), (400,)),
    Case("cl_hex", _req(POST, H, b"Content-Length: 0x5", body=b"hello"), (400,)),
    Case("cl_empty", _req(POST, H, b"Content-Length: ", body=b"hello"), (400,)),
    Case("cl_space_inside", _req(POST, H, b"Content-Length: 1 0", body=b"0123456789"),
         (400,)),
    Case("cl_overflow", _req(POST, H, b"Content-Length: 99999999999999999999999",
                             body=b"hello"), (400, 413),
         why="cannot be represented; 413 is the contract's reserved code for too large"),
    Case("te_chunked_identity", _req(POST, H, b"Transfer-Encoding: chunked, identity",
                                     body=CHUNKED_BODY), (400, 501),
         why="9112 6.3: chunked not final -> 400; identity unknown -> 501 also defensible"),
    Case("te_xchunked", _req(POST, H, b"Transfer-Encoding: xchunked", body=CHUNKED_BODY),
         (400, 501), why="unknown coding (501) and chunked not final (400)"),
    Case("te_gzip", _req(POST, H, b"Transfer-Encoding: gzip", body=b"hello"), (501,),
         why="README: 501 for an unknown transfer coding"),
    Case("te_chunked_twice", _req(POST, H, b"Transfer-Encoding: chunked, chunked",
                                  body=CHUNKED_BODY), (400,),
         why="9112 6.1: chunked MUST NOT be applied more than once"),
    Case("te_two_fields_last_not_chunked", _req(POST, H, TE_CHUNKED,
                                                b"Transfer-Encoding: gzip", body=CHUNKED_BODY),
         (400, 501)),
    Case("te_in_http10", _req(b"POST /upload HTTP/1.0", H, TE_CHUNKED, body=CHUNKED_BODY),
         (400,), why="9112 6.1: TE in HTTP/1.0 means faulty framing"),
    Case("te_vertical_tab", _req(POST, H, b"Transfer-Encoding: chunked\x0b",
                                 body=CHUNKED_BODY), (400, 501),
         why="VT is not OWS, so the coding is not `chunked`"),
    Case("te_form_feed_prefix", _req(POST, H, b"Transfer-Encoding: \x0cchunked",
                                     body=CHUNKED_BODY), (400, 501)),
    Case("te_tab_before_colon", _req(POST, H, b"Transfer-Encoding\t: chunked",
                                     body=CHUNKED_BODY), (400,)),
    Case("te_space_before_colon", _req(POST, H, b"Transfer-Encoding : chunked",
                                       body=CHUNKED_BODY), (400,),
         why="9112 5.1: whitespace before the colon MUST be rejected with 400"),
    Case("te_trailing_space_and_cl", _req(POST, H, b"Transfer-Encoding: chunked \t",
                                          b"Content-Length: 5", body=CHUNKED_BODY), (400,),
         why="trailing OWS is still `chunked`, so this is CL+TE"),
    Case("te_leading_space_and_cl", _req(POST, H, b"Transfer-Encoding:  chunked",
                                         b"Content-Length: 5", body=CHUNKED_BODY), (400,)),
    # --- field syntax (RFC 9112 5, 2.2) ---
    Case("obs_fold", _req(GET, H, b"X-Folded: first", b"  second line"), (400,),
         why="9112 5.2: obs-fold; DESIGN: reject"),
    Case("obs_fold_tab", _req(GET, H, b"X-Folded: first", b"\tsecond"), (400,)),
    Case("bare_lf_request_line", b"GET / HTTP/1.1\n" + HOST + b"\r\n", (400,),
         why="DESIGN: bare LF rejected"),
    Case("bare_lf_in_field", b"GET / HTTP/1.1\r\nHost: sluice.test\nX-A: b\r\n\r\n", (400,)),
    Case("bare_lf_end_of_head", b"GET / HTTP/1.1\r\n" + HOST + b"\n", (400,)),
    Case("bare_cr_in_value", _req(GET, H, b"X-A: one\rtwo"), (400,),
         why="9112 2.2: bare CR is invalid"),
    Case("bare_cr_in_request_line", _req(b"GET /\r HTTP/1.1", H), (400,)),
    Case("nul_in_value", _req(GET, H, b"X-A: nul\x00here"), (400,)),
    Case("del_in_value", _req(GET, H, b"X-A: del\x7fhere"), (400,)),
    Case("space_before_colon", _req(GET, H, b"X-A : value"), (400,)),
    Case("space_in_field_name", _req(GET, H, b"X A: value"), (400,)),
    Case("empty_field_name", _req(GET, H, b": value"), (400,)),
    Case("field_without_colon", _req(GET, H, b"NoColonHere"), (400,)),
    Case("invalid_byte_in_field_name", _req(GET, H, b"X-\x01A: value"), (400,)),
    # --- Host (RFC 9112 3.2) ---
    Case("missing_host_http11", _req(GET, b"X-A: b"), (400,)),
    Case("two_hosts", _req(GET, H, b"Host: other.test"), (400,)),
    Case("two_hosts_same_value", _req(GET, H, H), (400,)),
    # --- request line (RFC 9112 3) ---
    Case("double_space_request_line", _req(b"GET  / HTTP/1.1", H), (400,)),
    Case("leading_space_request_line", _req(b" GET / HTTP/1.1", H), (400,)),
    Case("trailing_space_request_line", _req(b"GET / HTTP/1.1 ", H), (400,)),
    Case("tab_separated_request_line", _req(b"GET\t/\tHTTP/1.1", H), (400,)),
    Case("missing_target", _req(b"GET HTTP/1.1", H), (400,)),
    Case("lowercase_version", _req(b"GET / http/1.1", H), (400, 505),
         why="HTTP-name is case-sensitive; not a version at all (400), 505 tolerated"),
    Case("version_2_0", _req(b"GET / HTTP/2.0", H), (505,)),
    Case("version_1_2", _req(b"GET / HTTP/1.2", H), (505,),
         why="brief pins 505 (RFC 9110 2.5 would also allow treating it as 1.1)"),
    Case("version_3_0", _req(b"GET / HTTP/3.0", H), (505,)),
    Case("version_no_minor", _req(b"GET / HTTP/1", H), (400,)),
    Case("version_garbage", _req(b"GET / HTTP/1.1.1", H), (400,)),
    Case("target_with_space", _req(b"GET /a b HTTP/1.1", H), (400,)),
    Case("target_with_control_char", _req(b"GET /a\x01b HTTP/1.1", H), (400,)),
    Case("target_with_del", _req(b"GET /a\x7fb HTTP/1.1", H), (400,)),
    Case("method_invalid_byte", _req(b"G@T / HTTP/1.1", H), (400,)),
    Case("method_nul", _req(b"GE\x00T / HTTP/1.1", H), (400,)),
    # --- limits (README defaults: target 8 KiB, head 16 KiB, 100 fields) ---
    Case("target_20k", _req(b"GET /" + b"a" * (20 << 10) + b" HTTP/1.1", H), (414,)),
    Case("target_9k", _req(b"GET /" + b"a" * (9 << 10) + b" HTTP/1.1", H), (414,),
         why="over --target-bytes-max 8KiB but under the 16 KiB head limit"),
    Case("fields_200", _req(GET, H, *[b"X-F%d: v" % i for i in range(200)]), (431,)),
    Case("head_40k", _req(GET, H, *[b"X-Big%d: " % i + b"v" * 4000 for i in range(10)]),
         (431,)),
    Case("one_field_20k", _req(GET, H, b"X-Huge: " + b"v" * (20 << 10)), (431,)),
    # --- chunked body errors (RFC 9112 7.1) ---
    Case("chunk_size_0x_prefix", _req(POST, H, TE_CHUNKED, body=b"0x10\r\n" + b"a" * 16
                                      + b"\r\n0\r\n\r\n"), (400,), where="body"),
    Case("chunk_size_negative", _req(POST, H, TE_CHUNKED, body=b"-1\r\nhello\r\n0\r\n\r\n"),
         (400,), where="body"),
    Case("chunk_size_17_hex_digits", _req(POST, H, TE_CHUNKED,
                                          body=b"10000000000000000\r\nhello\r\n0\r\n\r\n"),
         (400, 413), where="body", why="overflows 64 bits"),
    Case("chunk_size_empty", _req(POST, H, TE_CHUNKED, body=b"\r\nhello\r\n0\r\n\r\n"),
         (400,), where="body"),
    Case("chunk_size_not_hex", _req(POST, H, TE_CHUNKED, body=b"5g\r\nhello\r\n0\r\n\r\n"),
         (400,), where="body"),
    Case("chunk_data_without_crlf", _req(POST, H, TE_CHUNKED,
                                         body=b"5\r\nhelloXX0\r\n\r\n"), (400,), where="body"),
    Case("chunk_data_longer_than_size", _req(POST, H, TE_CHUNKED,
                                             body=b"3\r\nhello\r\n0\r\n\r\n"), (400,),
         where="body"),
    Case("chunk_bare_lf", _req(POST, H, TE_CHUNKED, body=b"5\nhello\n0\n\n"), (400,),
         where="body"),
    Case("chunk_ext_with_nul", _req(POST, H, TE_CHUNKED,
                                    body=b"5;a=\x00\r\nhello\r\n0\r\n\r\n"), (400,),
         where="body"),
]


def _send_case(port: int, raw: bytes, timeout: float = 3.0):
    """Send `raw`, read one response, then report whether sluice closed the connection.
    Returns (response or None, closed, leftover bytes)."""
    sock = connect(port, timeout)
    bs = BufferedSocket(sock)
    try:
        try:
            sock.sendall(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass  # sluice may answer and close before reading everything
        try:
            resp = read_response(bs, "GET", timeout)
        except ConnectionClosed as e:
            return None, True, e.partial
        closed = bs.wait_closed(2.0)
        return resp, closed, bytes(bs.buf)
    finally:
        bs.close()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_malformed_request_rejected(sluice, make_backend, case):
    """Each malformed or ambiguous request gets its status, then the connection is closed,
    and nothing of it reaches the backend (see the module docstring)."""
    b = make_backend(echo())
    sluice.start([b])
    resp, closed, leftover = _send_case(sluice.port, case.raw)
    assert resp is not None, f"connection closed without a response (got {leftover!r})"
    assert resp.status in case.expected, \
        f"{case.id}: expected {case.expected}, got {resp.status} {resp.reason!r} ({case.why})"
    if 400 <= resp.status < 500:
        assert "close" in resp.connection_tokens(), \
            f"4xx parse error without `Connection: close`: {resp.headers}"
    assert closed, f"connection still open after the {resp.status} (extra bytes {leftover!r})"
    time.sleep(0.05)  # let anything wrongly forwarded land before looking
    if case.where == "head":
        assert b.bytes_received == 0, \
            f"bytes of a rejected request reached the backend: {b.raw_streams!r}"
    else:
        assert b.requests == [], \
            f"a complete request reached the backend: {[r.raw for r in b.requests]!r}"
    assert sluice.running()


VALID_FRAMING = [
    # (id, field line, body): OWS = *( SP / HTAB ) around a field value (RFC 9112 5.1,
    # RFC 9110 5.6.3) is not part of the value, and coding names are case-insensitive.
    ("te_leading_tab", b"Transfer-Encoding:\tchunked", CHUNKED_BODY),
    ("te_trailing_tab", b"Transfer-Encoding: chunked\t", CHUNKED_BODY),
    ("te_trailing_space", b"Transfer-Encoding: chunked ", CHUNKED_BODY),
    ("te_tabs_and_spaces", b"Transfer-Encoding:\t chunked \t", CHUNKED_BODY),
    ("te_no_space", b"Transfer-Encoding:chunked", CHUNKED_BODY),
    ("te_uppercase", b"Transfer-Encoding: CHUNKED", CHUNKED_BODY),
    ("cl_spaces", b"Content-Length:  5 ", b"hello"),
    ("cl_tabs", b"Content-Length:\t5\t", b"hello"),
]


@pytest.mark.parametrize("field,body", [v[1:] for v in VALID_FRAMING],
                         ids=[v[0] for v in VALID_FRAMING])
def test_valid_framing_variants_accepted(sluice, backend, field, body):
    """Framing fields with optional whitespace (spaces or tabs) or an upper-case coding
    are valid: the request is accepted, its body decoded to `hello`, and the connection
    stays usable."""
    sluice.start([backend])
    with Client(sluice.port) as c:
        c.send(_req(POST, H, field, body=body))
        assert Echoed(c.read_response()).body == b"hello"
        assert Echoed(c.request("GET", "/after")).target == "/after"
    assert [r.body for r in backend.requests] == [b"hello", b""]
    assert backend.errors == []


def _assert_only(backend, targets):
    got = [r.target for r in backend.requests]
    assert got == targets, f"backend saw {got}, the client sent {targets} as requests"
    assert backend.errors == [], backend.errors


def test_smuggle_cl_te_classic(sluice, backend):
    """CL.TE: `Content-Length: 6` + `Transfer-Encoding: chunked`, body `0\\r\\n\\r\\nG`.
    A front end using CL and a back end using TE would disagree on where the request
    ends; sluice must reject it and forward nothing (neither it nor what follows)."""
    sluice.start([backend])
    raw = (b"POST / HTTP/1.1\r\n" + HOST + b"Content-Length: 6\r\n"
           b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nG"
           + build_request("GET", "/next"))
    resp, closed, leftover = _send_case(sluice.port, raw)
    assert resp is not None and resp.status == 400, resp
    assert closed and leftover == b"", f"more than one response: {leftover!r}"
    time.sleep(0.05)
    assert backend.bytes_received == 0


def test_smuggle_te_cl_classic(sluice, backend):
    """TE.CL: `Content-Length: 4` + chunked body whose chunk holds a whole request. Must
    be rejected, and the hidden request must never reach the backend."""
    sluice.start([backend])
    hidden = b"GPOST /smuggled HTTP/1.1\r\n" + HOST + b"Content-Length: 15\r\n\r\nx=1"
    raw = (b"POST / HTTP/1.1\r\n" + HOST + b"Content-Length: 4\r\n"
           b"Transfer-Encoding: chunked\r\n\r\n"
           + b"%x\r\n" % len(hidden) + hidden + b"\r\n0\r\n\r\n")
    resp, closed, leftover = _send_case(sluice.port, raw)
    assert resp is not None and resp.status == 400, resp
    assert closed and leftover == b""
    time.sleep(0.05)
    assert backend.bytes_received == 0


def test_smuggle_te_te_obfuscated(sluice, backend):
    """TE.TE: two Transfer-Encoding fields, one of them junk. The coding list ends in an
    unknown coding, so sluice must refuse it rather than pick one."""
    sluice.start([backend])
    raw = (b"POST / HTTP/1.1\r\n" + HOST + b"Transfer-Encoding: chunked\r\n"
           b"Transfer-encoding: cow\r\n\r\n5c\r\nGPOST / HTTP/1.1\r\n\r\n0\r\n\r\n")
    resp, closed, _ = _send_case(sluice.port, raw)
    assert resp is not None and resp.status in (400, 501), resp
    assert closed
    time.sleep(0.05)
    assert backend.bytes_received == 0


def test_request_hidden_in_content_length_body(sluice, backend):
    """A Content-Length body that looks like a request is body, nothing more: the backend
    sees exactly the requests the client framed (the POST with that body, then the next
    pipelined GET), in order."""
    sluice.start([backend])
    hidden = build_request("GET", "/smuggled")
    with Client(sluice.port) as c:
        c.send(build_request("POST", "/outer", body=hidden) + build_request("GET", "/after"))
        e1 = Echoed(c.read_response())
        e2 = Echoed(c.read_response())
    assert (e1.target, e1.body) == ("/outer", hidden)
    assert e2.target == "/after"
    _assert_only(backend, ["/outer", "/after"])


def test_request_hidden_in_chunked_body(sluice, backend):
    """Chunk data that contains `0\\r\\n\\r\\n` and a whole request is data: the backend
    receives one POST whose decoded body is exactly those bytes, then the next request."""
    sluice.start([backend])
    hidden = b"0\r\n\r\n" + build_request("GET", "/smuggled")
    body = b"%x\r\n" % len(hidden) + hidden + b"\r\n0\r\n\r\n"
    with Client(sluice.port) as c:
        c.send(build_request("POST", "/outer", headers=[("Transfer-Encoding", "chunked")],
                             body=body) + build_request("GET", "/after"))
        e1 = Echoed(c.read_response())
        e2 = Echoed(c.read_response())
    assert (e1.target, e1.body) == ("/outer", hidden)
    assert e2.target == "/after"
    _assert_only(backend, ["/outer", "/after"])


def test_get_with_body_is_one_request(sluice, backend):
    """A GET with a Content-Length body holding a request: one GET with that body."""
    sluice.start([backend])
    hidden = build_request("DELETE", "/smuggled")
    with Client(sluice.port) as c:
        e = Echoed(c.request("GET", "/outer", body=hidden))
        assert e.body == hidden
        assert Echoed(c.request("GET", "/after")).target == "/after"
    _assert_only(backend, ["/outer", "/after"])


def test_pipelined_after_zero_length_body(sluice, backend):
    """`Content-Length: 0` followed by another request in the same send: two requests,
    in order, each seen by the backend once."""
    sluice.start([backend])
    with Client(sluice.port) as c:
        c.send(build_request("POST", "/first", body=b"") + build_request("GET", "/second"))
        assert Echoed(c.read_response()).target == "/first"
        assert Echoed(c.read_response()).target == "/second"
    _assert_only(backend, ["/first", "/second"])


def test_valid_request_then_malformed_on_same_connection(sluice, backend):
    """A good request followed (pipelined) by a malformed one: the first is answered
    normally, the second gets 400 and a close, and only the first reached the backend."""
    sluice.start([backend])
    raw = build_request("GET", "/good") + _req(POST, H, b"Content-Length: 5",
                                               TE_CHUNKED, body=CHUNKED_BODY)
    with Client(sluice.port) as c:
        c.send(raw)
        first = c.read_response()
        assert Echoed(first).target == "/good"
        second = c.read_response()
        assert second.status == 400, second
        closed = c.wait_closed(2.0)
    assert closed
    time.sleep(0.05)
    _assert_only(backend, ["/good"])


# ---------------------------------------------------------------------------------------
# Header timeout


@pytest.mark.time_limit(20)
def test_header_timeout_partial_head(sluice, backend):
    """Half a head, then silence: 408 once --client-header-timeout (1s) passes, then
    close; nothing reaches the backend."""
    sluice.start([backend], args=["--client-header-timeout", "1s"])
    with Client(sluice.port) as c:
        t0 = time.monotonic()
        c.send(b"GET /partial HTTP/1.1\r\nHost: sluice.test\r\nX-Half: ")
        r = c.read_response(timeout=4.0)
        elapsed = time.monotonic() - t0
        assert r.status == 408, r
        assert 0.8 <= elapsed <= 3.0, f"408 after {elapsed:.2f}s with a 1s header timeout"
        assert c.wait_closed(2.0)
    assert backend.bytes_received == 0


@pytest.mark.time_limit(20)
def test_header_timeout_slowloris(sluice, backend):
    """A client that keeps sending one head byte every 200 ms is still cut at the header
    deadline (measured from the first byte, not reset by each byte): 408 and close."""
    sluice.start([backend], args=["--client-header-timeout", "1s"])
    sock = connect(sluice.port, 5)
    bs = BufferedSocket(sock)
    try:
        payload = b"GET /slow HTTP/1.1\r\nHost: sluice.test\r\nX-Slow: " + b"a" * 1000
        t0 = time.monotonic()
        deadline = Deadline(5.0)
        i = 0
        cut = False
        while not deadline.expired() and i < len(payload):
            try:
                sock.sendall(payload[i:i + 1])
            except (BrokenPipeError, ConnectionResetError):
                cut = True
                break
            i += 1
            if readable(sock, 0.2):
                cut = True
                break
        elapsed = time.monotonic() - t0
        assert cut, "sluice never reacted to a head that took 5 s"
        assert elapsed <= 3.0, f"slowloris lasted {elapsed:.2f}s against a 1s header timeout"
        r = read_response(bs, timeout=2.0)
        assert r.status == 408, r
        assert bs.wait_closed(2.0)
    finally:
        bs.close()
    assert backend.bytes_received == 0


@pytest.mark.time_limit(20)
def test_header_timeout_does_not_cover_body(sluice, backend):
    """The header timeout ends with the head: a body that trickles in for longer than
    it (but with gaps well under --client-idle-timeout) is still accepted."""
    sluice.start([backend], args=["--client-header-timeout", "1s",
                                  "--client-idle-timeout", "5s"])
    body = b"0123456789"
    with Client(sluice.port) as c:
        c.send(build_request("POST", "/trickle", headers=[("Content-Length", str(len(body)))]))
        for i in range(len(body)):
            time.sleep(0.18)
            c.send(body[i:i + 1])
        e = Echoed(c.read_response(timeout=5))
    assert e.body == body


@pytest.mark.time_limit(20)
def test_header_timeout_starts_at_first_byte(sluice, backend):
    """A connection that stays silent for longer than the header timeout and then sends a
    whole request promptly is served (the idle wait is not part of the head time)."""
    sluice.start([backend], args=["--client-header-timeout", "1s"])
    with Client(sluice.port) as c:
        time.sleep(1.5)
        assert Echoed(c.request("GET", "/late")).target == "/late"


@pytest.mark.time_limit(20)
def test_body_idle_timeout(sluice, backend):
    """A request body that stops arriving for longer than --client-idle-timeout (1s): the
    connection is closed (after a 408 or not) within a few seconds, and the backend never
    gets a complete request."""
    sluice.start([backend], args=["--client-idle-timeout", "1s"])
    with Client(sluice.port) as c:
        c.send(build_request("POST", "/stalled", headers=[("Content-Length", "10")]) + b"12345")
        t0 = time.monotonic()
        assert c.wait_closed(4.0), "connection still open 4 s into a 1 s body stall"
        elapsed = time.monotonic() - t0
        assert elapsed >= 0.8, f"closed after {elapsed:.2f}s, before the idle timeout"
        data = bytes(c.bsock.buf)
        assert data == b"" or data.startswith(b"HTTP/1.1 408"), data[:100]
    assert backend.requests == []
