//! nghttp2 (HTTP/2 framing, HPACK, flow control, stream states) as one static library,
//! compiled by zig cc from the pinned `libnghttp2-sys` crate that tools/bootstrap.sh fetches
//! into .nghttp2/. build.zig calls `library` once and links the result into every program that
//! uses src/h2/.
//!
//! Decisions:
//! - The source list is nghttp2's own (`NGHTTP2_SOURCES` in lib/CMakeLists.txt, read at
//!   configure time), so a new crate version needs no list edited by hand; no CMake runs. The
//!   two generated inputs are written here: `nghttp2ver.h` from its `.in` template, with the
//!   version after the `+` of the crate's version (as the crate's build.rs does), and the
//!   configuration as `-D` flags (what CMake's checks find on Linux with musl: <arpa/inet.h>,
//!   <netinet/in.h>, clock_gettime with CLOCK_MONOTONIC, which the reset and "glitch" rate
//!   limiters read; without it they would read time() instead).
//! - Always ReleaseFast, for `<arch>-linux-musl` at the CPU's baseline, named in full, as
//!   AWS-LC is (tools/crate.zig's `baseline` says why): one compilation serves every build,
//!   and zig's cache keeps it.
//! - Its memory is sluice's: every session gets an `nghttp2_mem` that allocates from the
//!   worker's pool (src/h2/memory.zig). The only other allocations are the default
//!   allocator's (lib/nghttp2_mem.c, used where no `nghttp2_mem` is passed) and those of the
//!   files that call the C heap themselves (the callbacks table and the options, made once at
//!   start-up). Every file is compiled with src/h2/nghttp2_malloc.h included first, which
//!   sends those calls to counted functions in src/h2/memory.zig, so a test proves a session
//!   never reaches the general heap.
//! - The API reaches Zig through translate-c of src/h2/nghttp2.h (the `nghttp2` module, which
//!   only src/h2/ imports: tools/check_layers.sh checks).
const std = @import("std");
const crate_files = @import("crate.zig");
const readFile = crate_files.readFile;

/// The crate version: the one tools/bootstrap.sh pins.
pub fn crateVersion(b: *std.Build) []const u8 {
    return crate_files.version(b, "nghttp2_sys_version");
}

/// The static archive and the API translated from src/h2/nghttp2.h, imported as `nghttp2`.
pub const Library = crate_files.Library;

/// The library for `target`'s CPU architecture, or a failing step that says to run
/// tools/bootstrap.sh when the crate is not there.
pub fn library(b: *std.Build, target: std.Build.ResolvedTarget) Library {
    const version = crateVersion(b);
    const crate = b.fmt(".nghttp2/libnghttp2-sys-{s}", .{version});
    const root = b.fmt("{s}/nghttp2/lib", .{crate});
    if (crate_files.missing(b, crate, "nghttp2's source", "nghttp2.zig")) |stub| return stub;

    const generated = b.addWriteFiles();
    _ = generated.add("nghttp2/nghttp2ver.h", versionHeader(b, version, readFile(b, b.fmt("{s}/includes/nghttp2/nghttp2ver.h.in", .{root}))));
    const generated_dir = generated.getDirectory();

    const baseline = crate_files.baseline(b, target);
    const lib = crate_files.staticLibrary(b, "nghttp2", baseline);
    const module = lib.root_module;
    module.addIncludePath(b.path(b.fmt("{s}/includes", .{root})));
    module.addIncludePath(generated_dir);
    const flags = [_][]const u8{
        "-std=c99",
        "-DBUILDING_NGHTTP2",
        "-DNGHTTP2_STATICLIB",
        "-DHAVE_ARPA_INET_H=1",
        "-DHAVE_NETINET_IN_H=1",
        "-DHAVE_CLOCK_GETTIME=1",
        "-DHAVE_DECL_CLOCK_MONOTONIC=1",
        "-D_GNU_SOURCE",
        "-DNDEBUG",
    };
    const routing_header = b.root.joinString(b.allocator, "src/h2/nghttp2_malloc.h") catch @panic("OOM");
    const sources = cmakeSources(b, readFile(b, b.fmt("{s}/CMakeLists.txt", .{root})));
    std.debug.assert(sources.len > 20);
    module.addCSourceFiles(.{ .root = b.path(root), .files = sources, .flags = &(flags ++ [_][]const u8{ "-include", routing_header }) });

    const translate = b.addTranslateC(.{
        .root_source_file = b.path("src/h2/nghttp2.h"),
        .target = baseline,
        .optimize = .ReleaseFast,
    });
    translate.addIncludePath(b.path(b.fmt("{s}/includes", .{root})));
    translate.addIncludePath(generated_dir);
    translate.defineCMacro("NGHTTP2_STATICLIB", "1");
    const api = b.createModule(.{ .root_source_file = translate.getOutput() });
    return .{ .archive = lib.getEmittedBin(), .module = api, .step = &lib.step };
}

/// Links the library into `compile` and gives its root module the `nghttp2` import.
pub fn link(compile: *std.Build.Step.Compile, nghttp2: Library) void {
    compile.root_module.link_libc = true;
    compile.step.dependOn(nghttp2.step);
    compile.root_module.addObjectFile(nghttp2.archive);
    compile.root_module.addImport("nghttp2", nghttp2.module);
}

/// nghttp2ver.h from its template: "0.1.13+1.68.1" is nghttp2 1.68.1, 0x014401.
fn versionHeader(b: *std.Build, crate_version: []const u8, template: []const u8) []const u8 {
    const plus = std.mem.indexOfScalar(u8, crate_version, '+') orelse @panic("libnghttp2-sys version has no +nghttp2 part");
    const version = crate_version[plus + 1 ..];
    var parts = std.mem.splitScalar(u8, version, '.');
    var number: u32 = 0;
    for (0..3) |_| {
        const part = parts.next() orelse @panic("nghttp2 version is not MAJOR.MINOR.PATCH");
        number = number * 256 + (std.fmt.parseInt(u8, part, 10) catch @panic("nghttp2 version: not a number"));
    }
    const with_version = std.mem.replaceOwned(u8, b.allocator, template, "@PACKAGE_VERSION@", version) catch @panic("OOM");
    const result = std.mem.replaceOwned(u8, b.allocator, with_version, "@PACKAGE_VERSION_NUM@", b.fmt("0x{x:0>6}", .{number})) catch @panic("OOM");
    std.debug.assert(std.mem.indexOf(u8, result, "@PACKAGE_") == null);
    return result;
}

/// The file names of `set(NGHTTP2_SOURCES ...)` in nghttp2's lib/CMakeLists.txt.
fn cmakeSources(b: *std.Build, cmake: []const u8) []const []const u8 {
    const key = "set(NGHTTP2_SOURCES";
    const start = std.mem.indexOf(u8, cmake, key) orelse @panic("lib/CMakeLists.txt: no NGHTTP2_SOURCES");
    const end = std.mem.indexOfScalarPos(u8, cmake, start, ')') orelse @panic("lib/CMakeLists.txt: unterminated NGHTTP2_SOURCES");
    var words = std.mem.tokenizeAny(u8, cmake[start + key.len .. end], " \t\r\n");
    var files: std.ArrayList([]const u8) = .empty;
    while (words.next()) |word| {
        std.debug.assert(std.mem.endsWith(u8, word, ".c"));
        files.append(b.allocator, word) catch @panic("OOM");
    }
    return files.items;
}
