/* nghttp2's API as src/h2/ uses it: build.zig translates it into the `nghttp2` module
   (tools/nghttp2.zig), which only src/h2/ imports. */
#include <nghttp2/nghttp2.h>
