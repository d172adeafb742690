//! A compiled program: functions (bytecode and metadata), constant pools and exports. The
//! compiler builds one; image.zig writes it to bytes and reads it back; verify.zig checks it
//! before anything runs it. All slices point into memory the program's owner keeps (the
//! compiler's arena, or the image bytes).
const std = @import("std");

const bytecode = @import("bytecode.zig");

const Program = @This();

functions: []const Function,
numbers: []const f64,
strings: []const StringConstant,
/// Export names (string constant indices); `set_export i` stores export i's value.
exports: []const u16,
/// Names of host globals the program uses (string constant indices); `push_global` ids at and
/// above `builtins.globals.len` index this list.
host_globals: []const u16,
/// The file name, for error positions.
source_name: []const u8,
/// The source text, as written (UTF-8): what `String(f)` shows of a function is its slice of
/// it, as in JavaScript.
source: []const u8,

pub const no_name: u16 = 0xFFFF;

pub const StringConstant = struct {
    /// Latin-1 bytes, or UTF-16LE units when `wide`.
    bytes: []const u8,
    wide: bool,
};

pub const Position = extern struct {
    pc: u32,
    line: u32,
    column: u32,
};

/// Source text for an error message at a call or iteration site ("obj.f is not a function").
pub const SiteName = extern struct {
    pc: u32,
    name: u16,
    _: u16 = 0,
};

/// What a function is, which decides what `new` and `this` do with it.
pub const Kind = enum(u8) {
    /// `function f() {}`: callable and constructible, with a `prototype`.
    normal,
    /// Arrow functions have no `this` of their own and no `prototype` (`x instanceof f` is
    /// a TypeError for them).
    arrow,
    /// Object and class methods, getters and setters: a `this`, but no `prototype`.
    method,
    /// A class's constructor: only `new` may call it.
    base_constructor,
    /// A constructor of a class that `extends`: `this` exists once `super()` returned.
    derived_constructor,
    /// The top-level code.
    top_level,
    /// `function* g() {}`: a call makes a generator object; not a constructor.
    generator,
    /// `*m() {}` in an object or a class: a generator with a method's `this`.
    generator_method,
    /// `async function f() {}`: runs as a generator whose `await` suspends it, and returns
    /// a promise (builtins/promises.zig).
    async_function,
    /// `async m() {}` in an object or a class.
    async_method,
    /// `async () => {}`: an arrow's `this`.
    async_arrow,
    /// `async function* g() {}`: a call makes an async generator object, whose next()
    /// returns promises (builtins/async_generators.zig); `await` suspends it too.
    async_generator,
    /// `async *m() {}` in an object or a class.
    async_generator_method,

    /// A call makes a generator object (sync or async) and runs nothing of the body.
    pub fn isGenerator(k: Kind) bool {
        return k == .generator or k == .generator_method or k.isAsyncGenerator();
    }

    pub fn isAsyncGenerator(k: Kind) bool {
        return k == .async_generator or k == .async_generator_method;
    }

    pub fn isAsync(k: Kind) bool {
        return k == .async_function or k == .async_method or k == .async_arrow;
    }

    /// Whether the body runs on a frame that can be suspended (generator_start).
    pub fn suspends(k: Kind) bool {
        return k.isGenerator() or k.isAsync();
    }

    pub fn isConstructor(k: Kind) bool {
        return k == .normal or k == .base_constructor or k == .derived_constructor;
    }

    pub fn isClassConstructor(k: Kind) bool {
        return k == .base_constructor or k == .derived_constructor;
    }
};

pub const Function = struct {
    /// String constant for `f.name`, or `no_name`.
    name: u16,
    /// `f.length`: parameters before the first default or rest.
    length: u16,
    param_count: u16,
    local_count: u16,
    stack_max: u16,
    handler_max: u16,
    has_rest: bool,
    kind: Kind,
    /// The function whose code creates this one (`closure`), or `no_name` for the top level.
    parent: u16,
    code: []const u8,
    captures: []const bytecode.Capture,
    positions: []const Position,
    site_names: []const SiteName,
    /// The function's text in `Program.source`, in bytes: from `function` (or an arrow's
    /// parameters) to the end of its body. Empty for the top level.
    source_start: u32,
    source_end: u32,

    /// The source position of the instruction at `pc` (the last entry at or before it).
    pub fn positionAt(f: *const Function, pc: u32) ?Position {
        var found: ?Position = null;
        for (f.positions) |p| {
            if (p.pc > pc) break;
            found = p;
        }
        return found;
    }

    pub fn isArrow(f: *const Function) bool {
        return f.kind == .arrow or f.kind == .async_arrow;
    }

    pub fn siteNameAt(f: *const Function, pc: u32) ?u16 {
        for (f.site_names) |s| {
            if (s.pc == pc) return s.name;
        }
        return null;
    }
};
