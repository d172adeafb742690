//! zlib's deflate half (deflate, trees, the CRC-32 and Adler-32 sums) as one static library,
//! compiled by zig cc from the zlib inside the pinned `libz-sys` crate that tools/bootstrap.sh
//! fetches into .zlib/. build.zig calls `library` once and links the result into every program
//! that uses src/zlib/ (the proxy's response compression).
//!
//! Decisions:
//! - Only the five files compression needs: sluice never inflates (the gz* file API, inflate
//!   and the one-shot helpers stay out). No configure step: zlib's zconf.h works as shipped
//!   on Linux.
//! - Always ReleaseFast, for `<arch>-linux-musl` at the CPU's baseline, as AWS-LC and nghttp2
//!   are (tools/crate.zig's `baseline` says why): compression is the one place sluice spends
//!   CPU per byte, and zlib is written for -O2/-O3 C.
//! - Its memory is sluice's: src/zlib/Deflate.zig hands every stream a `zalloc` that carves
//!   from the stream's own fixed region, so zlib's default allocator (zutil.c's `zcalloc`,
//!   used only when no `zalloc` is given) is never reached.
//! - The API reaches Zig through translate-c of src/zlib/zlib.h (the `zlib` module, which only
//!   src/zlib/ imports: tools/check_layers.sh checks).
const std = @import("std");
const crate_files = @import("crate.zig");

/// The crate version: the one tools/bootstrap.sh pins.
pub fn crateVersion(b: *std.Build) []const u8 {
    return crate_files.version(b, "zlib_sys_version");
}

pub const Library = crate_files.Library;

const sources = [_][]const u8{ "deflate.c", "trees.c", "crc32.c", "adler32.c", "zutil.c" };

/// The library for `target`'s CPU architecture, or a failing step that says to run
/// tools/bootstrap.sh when the crate is not there.
pub fn library(b: *std.Build, target: std.Build.ResolvedTarget) Library {
    const crate = b.fmt(".zlib/libz-sys-{s}", .{crateVersion(b)});
    const root = b.fmt("{s}/src/zlib", .{crate});
    if (crate_files.missing(b, crate, "zlib's source", "zlib.zig")) |stub| return stub;

    const baseline = crate_files.baseline(b, target);
    const lib = crate_files.staticLibrary(b, "z", baseline);
    lib.root_module.addIncludePath(b.path(root));
    lib.root_module.addCSourceFiles(.{
        .root = b.path(root),
        .files = &sources,
        .flags = &.{ "-std=c11", "-DHAVE_UNISTD_H", "-DHAVE_STDARG_H", "-D_LARGEFILE64_SOURCE=1", "-DNDEBUG" },
    });

    const translate = b.addTranslateC(.{
        .root_source_file = b.path("src/zlib/zlib.h"),
        .target = baseline,
        .optimize = .ReleaseFast,
    });
    translate.addIncludePath(b.path(root));
    const api = b.createModule(.{ .root_source_file = translate.getOutput() });
    return .{ .archive = lib.getEmittedBin(), .module = api, .step = &lib.step };
}

/// Links the library into `compile` and gives its root module the `zlib` import.
pub fn link(compile: *std.Build.Step.Compile, zlib: Library) void {
    compile.root_module.link_libc = true;
    compile.step.dependOn(zlib.step);
    compile.root_module.addObjectFile(zlib.archive);
    compile.root_module.addImport("zlib", zlib.module);
}
