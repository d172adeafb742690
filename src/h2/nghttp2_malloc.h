/* Included first (clang -include) into every file of nghttp2: its calls to the C heap (its
   default allocator in lib/nghttp2_mem.c, used where no nghttp2_mem is passed, and the
   callbacks table and options, which lib/nghttp2_callbacks.c and lib/nghttp2_option.c
   allocate themselves) go to functions in src/h2/memory.zig that count them and then call the
   C heap, so a test can prove that a session allocates only from its pool. See
   tools/nghttp2.zig.

   The same names are members of nghttp2_mem, called as `mem->malloc(size, user_data)`, with
   one argument more than the C functions: the macros tell the two apart by their number of
   arguments and leave the members' calls as they are (a macro's own name in its expansion is
   not expanded again). Defined after <stdlib.h> has declared the real functions. */
#include <stddef.h>
#include <stdlib.h>
void *sluice_h2_heap_malloc(size_t size);
void *sluice_h2_heap_calloc(size_t count, size_t size);
void *sluice_h2_heap_realloc(void *pointer, size_t size);
void sluice_h2_heap_free(void *pointer);
#define SLUICE_H2_THIRD(a, b, c, ...) c
#define SLUICE_H2_FOURTH(a, b, c, d, ...) d
#define malloc(...) SLUICE_H2_THIRD(__VA_ARGS__, malloc, sluice_h2_heap_malloc, )(__VA_ARGS__)
#define free(...) SLUICE_H2_THIRD(__VA_ARGS__, free, sluice_h2_heap_free, )(__VA_ARGS__)
#define calloc(...) SLUICE_H2_FOURTH(__VA_ARGS__, calloc, sluice_h2_heap_calloc, )(__VA_ARGS__)
#define realloc(...) SLUICE_H2_FOURTH(__VA_ARGS__, realloc, sluice_h2_heap_realloc, )(__VA_ARGS__)
