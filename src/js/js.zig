//! sluice's JavaScript engine: a strict subset of modern JavaScript (docs/JS.md), compiled to
//! bytecode and interpreted, with all of a run's objects in one arena.
//!
//! The pipeline: Lexer -> Parser (ast.zig) -> scope analysis (scope.zig) -> Compiler ->
//! Program -> image (bytes, versioned and checksummed) -> verifier -> Vm (interpreter.zig).
const std = @import("std");

pub const Value = @import("value.zig").Value;
pub const Heap = @import("Heap.zig");
pub const Program = @import("Program.zig");
pub const Compiler = @import("Compiler.zig");
pub const Vm = @import("Vm.zig");
pub const builtins = @import("builtins.zig");
pub const Engine = @import("Engine.zig");
pub const image = @import("image.zig");
pub const string = @import("string.zig");
pub const meter = @import("meter.zig");
pub const inspect = @import("builtins/inspect.zig");
pub const cli = @import("cli.zig");
pub const HostOps = @import("HostOps.zig");

test {
    _ = @import("value.zig");
    _ = @import("Heap.zig");
    _ = @import("string.zig");
    _ = @import("number.zig");
    _ = @import("Lexer.zig");
    _ = @import("Parser.zig");
    _ = @import("scope.zig");
    _ = @import("ast.zig");
    _ = @import("bytecode.zig");
    _ = @import("Program.zig");
    _ = @import("Compiler.zig");
    _ = @import("object.zig");
    _ = @import("names.zig");
    _ = @import("builtins.zig");
    _ = @import("Vm.zig");
    _ = @import("interpreter.zig");
    _ = @import("operations.zig");
    _ = @import("run_test.zig");
    _ = @import("image.zig");
    _ = @import("verify.zig");
    _ = @import("cli.zig");
    _ = @import("Engine.zig");
    _ = @import("HostOps.zig");
    _ = @import("Engine_host_ops_test.zig");
    _ = @import("fdlibm.zig");
    _ = @import("casing.zig");
    _ = @import("meter.zig");
    _ = @import("budget_test.zig");
    _ = @import("symbol.zig");
    _ = @import("regexp.zig");
}
