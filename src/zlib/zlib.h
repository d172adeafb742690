/* zlib's API as src/zlib/ uses it: build.zig translates it into the `zlib` module
   (tools/zlib.zig), which only src/zlib/ imports. */
#include <zlib.h>
