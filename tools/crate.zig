//! What tools/aws_lc.zig, tools/nghttp2.zig and tools/zlib.zig share: a C library compiled from a crate that
//! tools/bootstrap.sh fetches, its pinned version, its files read at configure time, and the
//! failing stand-in when the crate is not there yet.
const std = @import("std");

/// A C library as build.zig links it.
pub const Library = struct {
    /// The static archive.
    archive: std.Build.LazyPath,
    /// The API, translated from its header by translate-c.
    module: *std.Build.Module,
    /// The step that builds the archive (or fails, when the crate is missing).
    step: *std.Build.Step,
};

/// The crate version tools/bootstrap.sh pins as `key="..."` (read from there, so it is
/// written once).
pub fn version(b: *std.Build, comptime key: []const u8) []const u8 {
    const script = @embedFile("bootstrap.sh");
    const start = std.mem.indexOf(u8, script, key ++ "=\"") orelse @panic("tools/bootstrap.sh names no " ++ key);
    const rest = script[start + key.len + 2 ..];
    return b.dupe(rest[0 .. std.mem.indexOfScalar(u8, rest, '"') orelse @panic("tools/bootstrap.sh: unterminated " ++ key)]);
}

/// Null when the crate in `folder` is complete (and then a dependency of the configuration);
/// else a library whose step fails saying to run tools/bootstrap.sh.
pub fn missing(b: *std.Build, folder: []const u8, what: []const u8, stub_name: []const u8) ?Library {
    b.root.access(b.graph.io, b.fmt("{s}/.complete", .{folder}), .{}) catch {
        // Configure again next time: by then tools/bootstrap.sh may have fetched it.
        b.graph.poisonCache();
        const fail = b.addFail(b.fmt("{s} ({s}) is missing: run tools/bootstrap.sh (make does)", .{ what, folder }));
        const stub = b.addWriteFiles().add(stub_name, "");
        return .{ .archive = stub, .module = b.createModule(.{ .root_source_file = stub }), .step = &fail.step };
    };
    // What this reads at configure time, so zig's configuration cache notices a new or a
    // removed crate (readFile adds the files it reads).
    b.dependOnFileContents(b.path(b.fmt("{s}/.complete", .{folder})));
    return null;
}

/// A file of the crate, read at configure time (and so a dependency of the configuration).
pub fn readFile(b: *std.Build, path: []const u8) []const u8 {
    b.dependOnFileContents(b.path(path));
    const full = b.root.joinString(b.allocator, path) catch @panic("OOM");
    return std.Io.Dir.cwd().readFileAlloc(b.graph.io, full, b.allocator, .limited(1 << 20)) catch |err|
        std.debug.panic("cannot read {s}: {t}", .{ full, err });
}

/// A target's CPU architecture at its baseline, on Linux with musl, named in full rather than
/// copied from `target`: `native` (a plain `zig build`) and `x86_64-linux-musl` (`make
/// release`) then share one compilation, and translate-c of a `native` OS reads the host's
/// /usr/include before the -I path (which, on a machine with OpenSSL's headers installed,
/// translates OpenSSL's <openssl/ssl.h> instead of AWS-LC's).
pub fn baseline(b: *std.Build, target: std.Build.ResolvedTarget) std.Build.ResolvedTarget {
    return b.resolveTargetQuery(.{
        .cpu_arch = target.result.cpu.arch,
        .cpu_model = .baseline,
        .os_tag = .linux,
        .abi = .musl,
    });
}

/// A static C library named `name`, ReleaseFast for `baseline` with libc's headers, each
/// function and datum in its own section so the link keeps only what sluice calls.
pub fn staticLibrary(b: *std.Build, name: []const u8, baseline_target: std.Build.ResolvedTarget) *std.Build.Step.Compile {
    const lib = b.addLibrary(.{
        .name = name,
        .linkage = .static,
        .root_module = b.createModule(.{
            .target = baseline_target,
            .optimize = .ReleaseFast,
            .link_libc = true,
        }),
    });
    lib.link_function_sections = true;
    lib.link_data_sections = true;
    return lib;
}
