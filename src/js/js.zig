//! sluice's JavaScript engine (temporary root while it grows).
test {
    _ = @import("value.zig");
    _ = @import("Heap.zig");
    _ = @import("string.zig");
    _ = @import("number.zig");
    _ = @import("Lexer.zig");
    _ = @import("Parser.zig");
    _ = @import("scope.zig");
}
