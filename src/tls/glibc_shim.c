/*
 * The glibc-only symbols that Debian's libssl.a and libcrypto.a reference, for linking them
 * into a static musl binary. Debian builds OpenSSL against glibc with _FORTIFY_SOURCE, so
 * its objects call glibc's checked variants (the `__*_chk` family), the C99 scanf alias, the
 * LFS `fopen64`, and the ucontext functions that OpenSSL's ASYNC jobs use. musl has none of
 * them. Each one here does what glibc documents (the LSB names the contracts), in a few
 * lines, on top of musl; src/tls/glibc_shim.zig tests each against that contract.
 *
 * The list is every symbol in the archives that is undefined and not in musl:
 *   nm -u libcrypto.a libssl.a, minus what the archives and musl define.
 * A new Debian build that needs another one fails the link with its name.
 *
 * Decisions:
 * - A failed check aborts, as glibc's __chk_fail does, after the same message on stderr: the
 *   caller has just proven a buffer overflow, and carrying on would be worse.
 * - getcontext/setcontext fail with ENOSYS: OpenSSL then reports ASYNC as not capable
 *   (ASYNC_is_capable) and never starts an async job. sluice never asks for one
 *   (SSL_MODE_ASYNC), so makecontext is never reached; it does nothing.
 * - The `flag` argument of the printf family (glibc refuses %n in writable formats when it
 *   is positive) is not checked: OpenSSL's formats are string literals.
 */
#define _GNU_SOURCE /* vsyslog, ucontext_t */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <syslog.h>
#include <ucontext.h>
#include <unistd.h>

static _Noreturn void chk_fail(void) {
    static const char message[] = "*** buffer overflow detected ***: terminated\n";
    (void)!write(2, message, sizeof message - 1);
    abort();
}

void *__memcpy_chk(void *dest, const void *src, size_t len, size_t destlen) {
    if (destlen < len) chk_fail();
    return memcpy(dest, src, len);
}

void *__memset_chk(void *dest, int c, size_t len, size_t destlen) {
    if (destlen < len) chk_fail();
    return memset(dest, c, len);
}

char *__strcat_chk(char *dest, const char *src, size_t destlen) {
    size_t dest_len = strlen(dest);
    size_t src_len = strlen(src);
    if (dest_len >= destlen || src_len >= destlen - dest_len) chk_fail();
    memcpy(dest + dest_len, src, src_len + 1);
    return dest;
}

int __sprintf_chk(char *s, int flag, size_t slen, const char *format, ...) {
    (void)flag;
    if (slen == 0) chk_fail();
    va_list ap;
    va_start(ap, format);
    /* An unknown object size comes as (size_t)-1; musl's vsnprintf refuses sizes over
       INT_MAX, so that case is plain vsprintf, as glibc's is. */
    int n = slen > INT_MAX ? vsprintf(s, format, ap) : vsnprintf(s, slen, format, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n >= slen) chk_fail();
    return n;
}

int __vfprintf_chk(FILE *stream, int flag, const char *format, va_list ap) {
    (void)flag;
    return vfprintf(stream, format, ap);
}

int __fprintf_chk(FILE *stream, int flag, const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    int n = __vfprintf_chk(stream, flag, format, ap);
    va_end(ap);
    return n;
}

void __syslog_chk(int priority, int flag, const char *format, ...) {
    (void)flag;
    va_list ap;
    va_start(ap, format);
    vsyslog(priority, format, ap);
    va_end(ap);
}

long __fdelt_chk(long d) {
    if (d < 0 || d >= FD_SETSIZE) chk_fail();
    return d / (long)(8 * sizeof(long));
}

int __isoc99_sscanf(const char *s, const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    int n = vsscanf(s, format, ap);
    va_end(ap);
    return n;
}

/* musl's off_t is 64 bits everywhere: fopen is already fopen64. */
FILE *fopen64(const char *path, const char *mode) {
    return fopen(path, mode);
}

int getcontext(ucontext_t *ucp) {
    (void)ucp;
    errno = ENOSYS;
    return -1;
}

void makecontext(ucontext_t *ucp, void (*func)(void), int argc, ...) {
    (void)ucp;
    (void)func;
    (void)argc;
}

int setcontext(const ucontext_t *ucp) {
    (void)ucp;
    errno = ENOSYS;
    return -1;
}
