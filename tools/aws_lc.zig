//! AWS-LC (libcrypto and libssl) as one static library, compiled by zig cc from the pinned
//! `aws-lc-sys` crate that tools/bootstrap.sh fetches into .aws-lc/. build.zig calls `library`
//! once and links the result into every program that uses src/tls/.
//!
//! Decisions:
//! - The source lists are the crate's own: its cc builder names libcrypto's files (C, and the
//!   pre-generated assembly per target) in `builder/cc_builder/*.rs`, and AWS-LC's
//!   `ssl/CMakeLists.txt` names libssl's. Both are read here at configure time, so a new crate
//!   version needs no list edited by hand; no CMake, Go or Perl runs.
//! - Always ReleaseFast, for the CPU's baseline (AWS-LC picks its assembly at run time from
//!   CPUID), whatever sluice is built as: one compilation serves `zig build`, `test`, `bench`,
//!   `sim` and `make release`, and zig's cache keeps it, so only a fresh clone (or a new
//!   crate) pays for it.
//! - libssl is C++ built as AWS-LC builds it (no exceptions, no RTTI, no C++ runtime: its
//!   `PURE_VIRTUAL` and `HAS_VIRTUAL_DESTRUCTOR` avoid `__cxa_*` and `operator delete`). It
//!   needs libc++'s headers to compile, not its library: the archive is linked as an object
//!   file, so the programs that use it do not link libc++.
//! - Its memory is sluice's (src/tls/memory.zig, through `CRYPTO_set_mem_functions`), record
//!   buffers included: ssl/ssl_buffer.cc calls malloc() and free() rather than OPENSSL_malloc,
//!   so it is compiled with src/tls/aws_lc_malloc.h included first, which maps the two to
//!   OPENSSL_malloc and OPENSSL_free (the source is not edited). Two other files keep the C
//!   heap on purpose (reporting a failed allocation must not allocate through the same hooks):
//!   crypto/err/err.c (a thread's error queue, once, and the detail text some errors carry) and
//!   crypto/thread_pthread.c (a thread's table of thread-locals, once).
//! - The API reaches Zig through translate-c of src/tls/aws_lc.h (the `aws_lc` module, which
//!   only src/tls/ imports): every declaration and constant comes from AWS-LC's headers, so
//!   none is copied by hand. Translated once per header change, cached like the archive.
//! - Size (docs/TLS.md, "Size", has the figures): all of AWS-LC's assembly is kept, AES-GCM's
//!   AVX-512 code (700 KB of unrolled code, three times the throughput of its AES-NI path on
//!   CPUs with VAES) and RSA's AVX-512 IFMA code (a full RSA handshake 2.8 times cheaper):
//!   CPU per request before bytes of binary. The C and C++ objects carry no unwind tables.
//!   Nothing is compiled `-Os`: on its handshake files it saved 35 KB and seemed to cost
//!   handshakes.
//! - No CPU jitter entropy (AWS-LC's default outside FIPS builds): the random generator is
//!   seeded from the kernel (getrandom).
const std = @import("std");
const crate_files = @import("crate.zig");
const readFile = crate_files.readFile;

/// The crate version: the one tools/bootstrap.sh pins.
pub fn crateVersion(b: *std.Build) []const u8 {
    return crate_files.version(b, "aws_lc_sys_version");
}

/// The static archive (libcrypto and libssl in one) and the API translated from
/// src/tls/aws_lc.h, imported as `aws_lc`.
pub const Library = crate_files.Library;

/// The library for `target`'s CPU architecture, or a failing step that says to run
/// tools/bootstrap.sh when the crate is not there.
pub fn library(b: *std.Build, target: std.Build.ResolvedTarget) Library {
    const version = crateVersion(b);
    const crate = b.fmt(".aws-lc/aws-lc-sys-{s}", .{version});
    const root = b.fmt("{s}/aws-lc", .{crate});
    if (crate_files.missing(b, crate, "AWS-LC's source", "aws_lc.zig")) |stub| return stub;
    const arch_list = switch (target.result.cpu.arch) {
        .x86_64 => "linux_x86_64.rs",
        .aarch64 => "linux_aarch64.rs",
        else => @panic("AWS-LC is built here for x86_64 and aarch64 Linux only"),
    };
    // For the CPU's baseline (crate.zig's `baseline` says why the target is named in full).
    const baseline = crate_files.baseline(b, target);
    const lib = b.addLibrary(.{
        .name = "aws-lc",
        .linkage = .static,
        .root_module = b.createModule(.{
            .target = baseline,
            .optimize = .ReleaseFast,
            .link_libc = true,
            // libc++'s headers only (see above).
            .link_libcpp = true,
            // Nothing unwinds through AWS-LC (C, and C++ without exceptions): no .eh_frame
            // for its C and C++ objects (its assembly keeps the CFI it carries).
            .unwind_tables = .none,
        }),
    });
    lib.link_function_sections = true;
    lib.link_data_sections = true;
    const module = lib.root_module;
    for ([_][]const u8{ "include", "third_party/s2n-bignum/include", "third_party/s2n-bignum/s2n-bignum-imported/include" }) |dir| {
        module.addIncludePath(b.path(b.fmt("{s}/{s}", .{ root, dir })));
    }
    const defines = [_][]const u8{
        "-DBORINGSSL_IMPLEMENTATION",
        "-DBORINGSSL_RELEASE_BUILD",
        "-DDISABLE_CPU_JITTER_ENTROPY",
        "-D_XOPEN_SOURCE=700",
        "-DAWS_LC_STDALIGN_AVAILABLE=1",
        "-DAWS_LC_BUILTIN_SWAP_SUPPORTED=1",
        "-DHAVE_LINUX_RANDOM_H=1",
        "-DNDEBUG",
        "-Wno-unused-parameter",
    };
    const c_flags = defines ++ [_][]const u8{"-std=c11"};
    const cxx_flags = defines ++ [_][]const u8{ "-std=c++17", "-fno-exceptions", "-fno-rtti" };
    const asm_flags = defines ++ [_][]const u8{"-DS2N_BN_HIDE_SYMBOLS=1"};

    const routing_header = b.root.joinString(b.allocator, "src/tls/aws_lc_malloc.h") catch @panic("OOM");
    const routed_cxx_flags = concat(b, &cxx_flags, &.{ "-include", routing_header });

    var c_files: std.ArrayList([]const u8) = .empty;
    var asm_files: std.ArrayList([]const u8) = .empty;
    for ([_][]const u8{ "universal.rs", arch_list }) |list| {
        const text = readFile(b, b.fmt("{s}/builder/cc_builder/{s}", .{ crate, list }));
        var quoted = QuotedStrings{ .text = text };
        while (quoted.next()) |path| {
            if (std.mem.startsWith(u8, path, "third_party/jitterentropy/")) continue;
            const into = if (std.mem.endsWith(u8, path, ".S")) &asm_files else &c_files;
            into.append(b.allocator, path) catch @panic("OOM");
        }
    }
    std.debug.assert(c_files.items.len > 100);
    module.addCSourceFiles(.{ .root = b.path(root), .files = c_files.items, .flags = &c_flags });
    module.addCSourceFiles(.{ .root = b.path(root), .files = asm_files.items, .flags = &asm_flags, .language = .assembly_with_preprocessor });

    const ssl_files = sslSources(b, readFile(b, b.fmt("{s}/ssl/CMakeLists.txt", .{root})));
    var ssl_cxx: std.ArrayList([]const u8) = .empty;
    var ssl_c: std.ArrayList([]const u8) = .empty;
    for (ssl_files) |file| {
        const path = b.fmt("ssl/{s}", .{file});
        if (std.mem.eql(u8, path, routed_file)) {
            module.addCSourceFile(.{ .file = b.path(b.fmt("{s}/{s}", .{ root, path })), .flags = routed_cxx_flags });
            continue;
        }
        const into = if (std.mem.endsWith(u8, file, ".cc")) &ssl_cxx else &ssl_c;
        into.append(b.allocator, path) catch @panic("OOM");
    }
    std.debug.assert(ssl_cxx.items.len > 20);
    module.addCSourceFiles(.{ .root = b.path(root), .files = ssl_cxx.items, .flags = &cxx_flags });
    module.addCSourceFiles(.{ .root = b.path(root), .files = ssl_c.items, .flags = &c_flags });

    const translate = b.addTranslateC(.{
        .root_source_file = b.path("src/tls/aws_lc.h"),
        .target = baseline,
        .optimize = .ReleaseFast,
    });
    translate.addIncludePath(b.path(b.fmt("{s}/include", .{root})));
    const api = b.createModule(.{ .root_source_file = translate.getOutput() });
    return .{ .archive = lib.getEmittedBin(), .module = api, .step = &lib.step };
}

/// The file whose malloc() and free() go to OPENSSL_malloc (see the decision on memory above).
const routed_file = "ssl/ssl_buffer.cc";

/// Links the library into `compile` (as an object file: see the decision on C++ above) and
/// gives its root module the `aws_lc` import.
pub fn link(compile: *std.Build.Step.Compile, aws_lc: Library) void {
    compile.root_module.link_libc = true;
    compile.step.dependOn(aws_lc.step);
    compile.root_module.addObjectFile(aws_lc.archive);
    compile.root_module.addImport("aws_lc", aws_lc.module);
}

fn concat(b: *std.Build, a: []const []const u8, z: []const []const u8) []const []const u8 {
    return std.mem.concat(b.allocator, []const u8, &.{ a, z }) catch @panic("OOM");
}

/// The strings in double quotes, in order: a Rust list of paths.
const QuotedStrings = struct {
    text: []const u8,
    at: usize = 0,

    fn next(q: *QuotedStrings) ?[]const u8 {
        const open = std.mem.indexOfScalarPos(u8, q.text, q.at, '"') orelse return null;
        const close = std.mem.indexOfScalarPos(u8, q.text, open + 1, '"') orelse return null;
        q.at = close + 1;
        return q.text[open + 1 .. close];
    }
};

/// The file names of `add_library(ssl ...)` in AWS-LC's ssl/CMakeLists.txt.
fn sslSources(b: *std.Build, cmake: []const u8) []const []const u8 {
    const start = std.mem.indexOf(u8, cmake, "add_library(") orelse @panic("ssl/CMakeLists.txt: no add_library");
    const end = std.mem.indexOfScalarPos(u8, cmake, start, ')') orelse @panic("ssl/CMakeLists.txt: unterminated add_library");
    var words = std.mem.tokenizeAny(u8, cmake[start + "add_library(".len .. end], " \t\r\n");
    const name = words.next() orelse @panic("ssl/CMakeLists.txt: empty add_library");
    std.debug.assert(std.mem.eql(u8, name, "ssl"));
    var files: std.ArrayList([]const u8) = .empty;
    while (words.next()) |word| files.append(b.allocator, word) catch @panic("OOM");
    return files.items;
}
