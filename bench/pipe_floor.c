/* The keep-alive floor for bench/proxy.sh: not a proxy, the least a proxy's event loop can do.
 * Each client connection gets its own backend connection, opened when the client is accepted,
 * and bytes are copied both ways as they come: epoll (level-triggered), one read and one write
 * per readiness, no parsing, no pooling, no timers. Whatever a real proxy does per request on
 * top of this (parse, route, rewrite heads, pick and pool backend connections, keep deadlines)
 * is its cost above the floor; sluice's target is to beat it, by doing fewer system calls per
 * request than a naive loop does (docs/ARCHITECTURE.md, "Keep-alive CPU").
 *
 * Single-threaded. A direction whose write would block stops reading its source until the
 * destination is writable again, so nothing is lost and nothing grows. Either side closing
 * closes the pair.
 *
 * Build: gcc -O2 -o pipe_floor bench/pipe_floor.c
 * Usage: pipe_floor LISTEN_PORT BACKEND_PORT   (both on 127.0.0.1)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

enum { buffer_bytes = 16384, events_max = 256 };

struct side;

/* One direction: bytes read from `from` waiting to be written to `to`. */
struct flow {
    char bytes[buffer_bytes];
    size_t start, end;
};

struct side {
    int fd;
    struct side *peer;
    struct flow out; /* read from this side, to be written to the peer */
    int connected;
    unsigned watched; /* the epoll events registered, so epoll_ctl runs only on a change */
    struct side *next_dead;
};

static int epoll_fd;
static struct sockaddr_in backend;
/* Pairs closed during a batch, freed after it: a later event of the batch may name them. */
static struct side *dead;

static void watch(struct side *side, int op, unsigned events) {
    struct epoll_event event = {.events = events, .data.ptr = side};
    epoll_ctl(epoll_fd, op, side->fd, &event);
    side->watched = events;
}

/* What `side` waits for: readable, unless its bytes are stuck at the peer; writable when the
 * peer's bytes are stuck at it (or it is still connecting). */
static void rearm(struct side *side) {
    unsigned events = 0;
    if (side->out.start == side->out.end) events |= EPOLLIN;
    if (!side->connected || side->peer->out.start != side->peer->out.end) events |= EPOLLOUT;
    if (events != side->watched) watch(side, EPOLL_CTL_MOD, events);
}

static void close_pair(struct side *side) {
    struct side *first = side < side->peer ? side : side->peer;
    if (first->fd < 0) return;
    close(first[0].fd);
    close(first[1].fd);
    first[0].fd = first[1].fd = -1;
    first->next_dead = dead;
    dead = first;
}

/* Writes what `from` holds to its peer. Returns -1 when the pair is gone. */
static int flush(struct side *from) {
    struct flow *flow = &from->out;
    struct side *to = from->peer;
    if (!to->connected) return 0;
    while (flow->start < flow->end) {
        ssize_t n = send(to->fd, flow->bytes + flow->start, flow->end - flow->start, MSG_NOSIGNAL);
        if (n < 0 && errno == EAGAIN) break;
        if (n <= 0) return -1;
        flow->start += (size_t)n;
    }
    if (flow->start == flow->end) flow->start = flow->end = 0;
    return 0;
}

static void accept_one(int listener) {
    int client = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (client < 0) return;
    int upstream = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (upstream < 0) {
        close(client);
        return;
    }
    int one = 1;
    setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(upstream, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(upstream, (struct sockaddr *)&backend, sizeof backend) < 0 && errno != EINPROGRESS) {
        close(client);
        close(upstream);
        return;
    }
    struct side *pair = calloc(2, sizeof *pair);
    if (!pair) {
        close(client);
        close(upstream);
        return;
    }
    pair[0] = (struct side){.fd = client, .peer = &pair[1], .connected = 1};
    pair[1] = (struct side){.fd = upstream, .peer = &pair[0], .connected = 0};
    watch(&pair[0], EPOLL_CTL_ADD, EPOLLIN);
    watch(&pair[1], EPOLL_CTL_ADD, EPOLLOUT);
}

static void ready(struct side *side, unsigned events) {
    if (side->fd < 0) return; /* Its pair closed earlier in this batch. */
    if (events & EPOLLOUT) {
        if (!side->connected) {
            int error = 0;
            socklen_t len = sizeof error;
            getsockopt(side->fd, SOL_SOCKET, SO_ERROR, &error, &len);
            if (error != 0) return close_pair(side);
            side->connected = 1;
        }
        if (flush(side->peer) < 0) return close_pair(side);
    }
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        struct flow *flow = &side->out;
        ssize_t n = recv(side->fd, flow->bytes + flow->end, buffer_bytes - flow->end, 0);
        if (n == 0 || (n < 0 && errno != EAGAIN)) return close_pair(side);
        if (n > 0) flow->end += (size_t)n;
        if (flush(side) < 0) return close_pair(side);
    }
    rearm(side);
    rearm(side->peer);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: pipe_floor LISTEN_PORT BACKEND_PORT\n");
        return 2;
    }
    int listen_port = atoi(argv[1]), backend_port = atoi(argv[2]);
    if (listen_port <= 0 || listen_port > 65535 || backend_port <= 0 || backend_port > 65535) return 2;
    backend = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons((unsigned short)backend_port)};
    backend.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

    int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((unsigned short)listen_port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listener, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(listener, 4096) != 0) {
        perror("pipe_floor: bind/listen");
        return 1;
    }
    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event event = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listener, &event);

    struct epoll_event events[events_max];
    for (;;) {
        int count = epoll_wait(epoll_fd, events, events_max, -1);
        if (count < 0 && errno != EINTR) return 1;
        for (int i = 0; i < count; i++) {
            if (events[i].data.ptr == NULL) {
                accept_one(listener);
                continue;
            }
            ready(events[i].data.ptr, events[i].events);
        }
        while (dead) {
            struct side *next = dead->next_dead;
            free(dead);
            dead = next;
        }
    }
}
