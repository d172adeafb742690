/* Included first (clang -include) into AWS-LC's ssl/ssl_buffer.cc, which allocates the record
   buffers (one or two per record) with malloc() and free() rather than OPENSSL_malloc: with
   this, they come from sluice's allocator too (src/tls/memory.zig, installed with
   CRYPTO_set_mem_functions), so a worker's record buffers come from its pool and never from
   the general heap. See tools/aws_lc.zig. Function-like macros defined after <stdlib.h> has
   declared the real functions: only calls are renamed. */
#include <stdlib.h>
#include <openssl/mem.h>
#define malloc(size) OPENSSL_malloc(size)
#define free(pointer) OPENSSL_free(pointer)
