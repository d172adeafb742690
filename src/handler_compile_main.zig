//! Entry point of the build-time handler compiler (src/handler/compile.zig). It sits in
//! src/ so that the whole tree is inside its module.
pub const main = @import("handler/compile.zig").main;
