/* The cold-start floor for bench/coldstart.sh: not a proxy, just what any server pays before
 * its first response. exec of a small static binary, socket + bind + listen on
 * 127.0.0.1:PORT, accept, read one request head, write a fixed 200 "hello\n" and close.
 * It keeps accepting until killed, so the driver stops it the same way as every contender.
 *
 * Build: gcc -O2 -static -o floor bench/floor.c
 *   (or: zig cc -target x86_64-linux-musl -O2 -static -o floor bench/floor.c)
 * Usage: floor PORT
 */
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char response[] =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: text/plain\r\n"
    "Content-Length: 6\r\n"
    "Connection: close\r\n"
    "\r\n"
    "hello\n";

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    int port = atoi(argv[1]);
    if (port <= 0 || port > 65535) return 2;

    int listener = socket(AF_INET, SOCK_STREAM, 0);
    if (listener < 0) return 1;
    int one = 1;
    /* As nginx, HAProxy and sluice do: a restart may bind while old sockets sit in TIME_WAIT. */
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listener, (struct sockaddr *)&addr, sizeof addr) != 0) return 1;
    if (listen(listener, 511) != 0) return 1;

    for (;;) {
        int conn = accept(listener, NULL, NULL);
        if (conn < 0) continue;
        /* Read until the end of the request head (the driver sends one small GET). */
        char buf[4096];
        size_t len = 0;
        for (;;) {
            ssize_t n = read(conn, buf + len, sizeof buf - 1 - len);
            if (n <= 0) break;
            len += (size_t)n;
            buf[len] = 0;
            if (strstr(buf, "\r\n\r\n") != NULL || len == sizeof buf - 1) break;
        }
        size_t off = 0;
        while (off < sizeof response - 1) {
            ssize_t n = write(conn, response + off, sizeof response - 1 - off);
            if (n <= 0) break;
            off += (size_t)n;
        }
        close(conn);
    }
}
