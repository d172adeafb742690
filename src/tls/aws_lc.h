/* The part of AWS-LC's API that src/tls/ uses: build.zig translates it into the `aws_lc`
   module (tools/aws_lc.zig), which only src/tls/ imports. */
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/hmac.h>
#include <openssl/ocsp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
