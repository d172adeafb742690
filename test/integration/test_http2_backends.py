"""HTTP/2 to backends: streams the member did not process are sent again, whatever their
method (RFC 9113 §8.7). A stream reset with REFUSED_STREAM, and one above the last stream a
GOAWAY says was taken, never reached the application: a POST is as safe to send again as a
GET. Members are hyper-h2 servers (h2member.py); every test runs once per I/O backend.
"""

import threading

import pytest

from client import request
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
