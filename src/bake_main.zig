//! Entry point of the build-time config compiler (src/config/bake.zig). It sits in src/ so
//! that the whole tree is inside its module.
pub const main = @import("config/bake.zig").main;
