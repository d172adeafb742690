//! The build menu:
//!   zig build                 sluice into zig-out/bin (add -Doptimize=ReleaseFast for speed)
//!   zig build -Dconfig=FILE   the same, with FILE (.zon or .json) compiled in (src/config/bake.zig)
//!   zig build -Dhandler=FILE  the same, with the JavaScript handler FILE compiled in, named after
//!                             its stem (repeatable; src/handler/compile.zig)
//!   zig build run -- ARGS     build and run sluice
//!   zig build test            unit tests (every file, through src/unit_tests.zig)
//!   zig build fuzz -- ARGS    seeded fuzz run of the HTTP parsers (--seed N --iterations N)
//!   zig build js-fuzz -- ARGS seeded fuzz run of the JavaScript engine (same arguments)
//!   zig build dns-fuzz -- ARGS seeded fuzz run of the DNS reply parser (same arguments)
//!   zig build sim -- ARGS     the data-plane simulator (--seed N | --seeds N [--first N]) [--ticks N]
//!   zig build bench           parser ns per head; end-to-end req/s and allocations per request
//!   zig build bench-NAME      one of them (http, proxy, policy, compression, js)
//!   zig build fmt             format the tree (fmt-check: fail if not formatted)
//!   zig build tls-bench       TLS in memory: handshakes per second, allocations, bytes per connection
//!
//!   zig build aws-lc          AWS-LC alone (what the first build of a fresh clone compiles)
//!   zig build nghttp2         nghttp2 alone
//!   zig build zlib            zlib's deflate alone
//!
//! sluice and its tests link AWS-LC, nghttp2 and zlib, compiled here from the pinned sources
//! tools/bootstrap.sh fetches (tools/aws_lc.zig, tools/nghttp2.zig, tools/zlib.zig), and are always built for
//! musl, so even a native build is one static binary (see staticTarget).
const std = @import("std");
const builtin = @import("builtin");
const aws_lc = @import("tools/aws_lc.zig");
const nghttp2 = @import("tools/nghttp2.zig");
const zlib = @import("tools/zlib.zig");

comptime {
    const pinned = std.SemanticVersion.parse("0.17.1") catch unreachable;
    if (builtin.zig_version.order(pinned) != .eq) {
        @compileError("sluice needs Zig 0.17.1 exactly; run tools/bootstrap.sh");
    }
}

pub fn build(b: *std.Build) void {
    const target = staticTarget(b, b.standardTargetOptions(.{}));
    const optimize = b.standardOptimizeOption(.{});
    const strip = b.option(bool, "strip", "Strip debug info from the binary") orelse false;
    const config_path = b.option([]const u8, "config", "Compile this config file (.zon or .json) into the binary");
    const handler_paths = b.option([]const []const u8, "handler", "Compile this JavaScript handler into the binary (repeatable)") orelse &.{};

    const tls = aws_lc.library(b, target);
    const h2 = nghttp2.library(b, target);
    const z = zlib.library(b, target);
    const exe = addSluice(b, target, optimize, strip);
    aws_lc.link(exe, tls);
    nghttp2.link(exe, h2);
    zlib.link(exe, z);
    addBakedConfig(b, exe, config_path);
    addEmbeddedHandlers(b, exe, handler_paths);
    addRun(b, exe);
    const test_step = addTests(b, target, optimize, tls, h2, z);
    addFuzz(b, target);
    addJsFuzz(b, target);
    addDnsFuzz(b, target);
    addSim(b, target, test_step, tls, h2, z);
    addBench(b, target, test_step, tls, h2, z);
    addTlsBench(b, target, test_step, tls);
    addFmt(b);
    b.step("aws-lc", "Compile AWS-LC (cached)").dependOn(tls.step);
    b.step("nghttp2", "Compile nghttp2 (cached)").dependOn(h2.step);
    b.step("zlib", "Compile zlib's deflate (cached)").dependOn(z.step);
}

/// Linux with glibc (what `native` means on Debian) becomes Linux with musl, keeping the CPU:
/// linking libc (AWS-LC needs one) with glibc would make a dynamic executable, and sluice
/// ships as one static binary. Other targets are left as asked.
///
/// The native CPU without AVX-512: on the AVX-512 machines we measure on, the vector code Zig
/// emits for it is pathologically slow (`std.mem.eql` of 100 bytes: 261 ns with AVX-512, 7 ns
/// with AVX2; the proxy's own code took 15% more user time per request), so a native build
/// uses AVX2 at most. `-Dcpu=...` still chooses anything else.
fn staticTarget(b: *std.Build, target: std.Build.ResolvedTarget) std.Build.ResolvedTarget {
    if (target.result.os.tag != .linux or !target.result.abi.isGnu()) return target;
    var query = target.query;
    if (query.isNativeCpu()) {
        query.cpu_model = .native; // as it was before the ABI was named
        if (target.result.cpu.arch == .x86_64) query.cpu_features_sub.addFeature(@backingInt(std.Target.x86.Feature.avx512f));
    }
    query.abi = .musl;
    query.glibc_version = null;
    return b.resolveTargetQuery(query);
}

fn addSluice(b: *std.Build, target: std.Build.ResolvedTarget, optimize: std.builtin.OptimizeMode, strip: bool) *std.Build.Step.Compile {
    const exe = b.addExecutable(.{
        .name = "sluice",
        .root_module = b.createModule(.{
            .root_source_file = b.path("src/main.zig"),
            .target = target,
            .optimize = optimize,
            .strip = if (strip) true else null,
        }),
    });
    b.installArtifact(exe);
    return exe;
}

/// The `baked_config` module main imports: without -Dconfig a stub that says so; with it, the
/// output of src/config/bake.zig, which validates the file (a mistake fails the build with its
/// line and column) and writes the Config as Zig source for the compiler to evaluate.
fn addBakedConfig(b: *std.Build, exe: *std.Build.Step.Compile, config_path: ?[]const u8) void {
    const source = if (config_path) |path| blk: {
        const bake = b.addExecutable(.{
            .name = "bake-config",
            .root_module = b.createModule(.{
                .root_source_file = b.path("src/bake_main.zig"),
                .target = b.graph.host,
                .optimize = .Debug,
            }),
        });
        const run = b.addRunArtifact(bake);
        run.addFileArg(.{ .cwd_relative = path });
        break :blk run.addOutputFileArg("baked_config.zig");
    } else b.addWriteFiles().add("baked_config.zig", "pub const present = false;\n");
    exe.root_module.addAnonymousImport("baked_config", .{ .root_source_file = source });
}

/// The `embedded_handlers` module main imports: for each -Dhandler file, its name (the file's
/// stem) and the bytecode image src/handler/compile.zig makes of it at build time (a mistake
/// fails the build with its FILE:LINE:COL). Without -Dhandler, an empty list.
fn addEmbeddedHandlers(b: *std.Build, exe: *std.Build.Step.Compile, paths: []const []const u8) void {
    const files = b.addWriteFiles();
    var source: std.ArrayList(u8) = .empty;
    source.appendSlice(b.allocator, "//! Handlers compiled in with -Dhandler (build.zig). Do not edit.\n" ++
        "pub const Embedded = struct { name: []const u8, image: []const u8 };\n" ++
        "pub const handlers = [_]Embedded{\n") catch @panic("out of memory");
    if (paths.len > 0) {
        const compiler = b.addExecutable(.{
            .name = "handler-compile",
            .root_module = b.createModule(.{
                .root_source_file = b.path("src/handler_compile_main.zig"),
                .target = b.graph.host,
                .optimize = .Debug,
            }),
        });
        for (paths) |path| {
            const stem = std.fs.path.stem(path);
            const run = b.addRunArtifact(compiler);
            run.addFileArg(.{ .cwd_relative = path });
            const image_name = b.fmt("{s}.image", .{stem});
            const image = run.addOutputFileArg(image_name);
            _ = files.addCopyFile(image, image_name);
            source.appendSlice(b.allocator, b.fmt("    .{{ .name = \"{s}\", .image = @embedFile(\"{s}\") }},\n", .{
                stem, image_name,
            })) catch @panic("out of memory");
        }
    }
    source.appendSlice(b.allocator, "};\n") catch @panic("out of memory");
    const root = files.add("embedded_handlers.zig", source.items);
    exe.root_module.addAnonymousImport("embedded_handlers", .{ .root_source_file = root });
}

fn addRun(b: *std.Build, exe: *std.Build.Step.Compile) void {
    const run = b.addRunArtifact(exe);
    run.addPassthruArgs();
    b.step("run", "Build and run sluice").dependOn(&run.step);
}

fn addTests(b: *std.Build, target: std.Build.ResolvedTarget, optimize: std.builtin.OptimizeMode, tls: aws_lc.Library, h2: nghttp2.Library, z: zlib.Library) *std.Build.Step {
    // `zig build test -Dtest-filter=NAME` runs only the tests whose names contain NAME.
    const filters = b.option([]const []const u8, "test-filter", "Run only the unit tests whose names contain this (repeatable)") orelse &.{};
    const tests = b.addTest(.{ .root_module = b.createModule(.{
        .root_source_file = b.path("src/unit_tests.zig"),
        .target = target,
        .optimize = optimize,
    }), .filters = filters });
    aws_lc.link(tests, tls);
    nghttp2.link(tests, h2);
    zlib.link(tests, z);
    const run = b.addRunArtifact(tests);
    const step = b.step("test", "Run the unit tests (and compile the benchmarks)");
    step.dependOn(&run.step);
    return step;
}

fn addFuzz(b: *std.Build, target: std.Build.ResolvedTarget) void {
    addFuzzStep(b, target, "fuzz-http", "src/http/fuzz.zig", "fuzz", "Fuzz the HTTP parsers (args: --seed N --iterations N)");
}

fn addJsFuzz(b: *std.Build, target: std.Build.ResolvedTarget) void {
    addFuzzStep(b, target, "fuzz-js", "src/js/fuzz.zig", "js-fuzz", "Fuzz the JavaScript engine (args: --seed N --iterations N)");
}

fn addDnsFuzz(b: *std.Build, target: std.Build.ResolvedTarget) void {
    addFuzzStep(b, target, "fuzz-dns", "src/dns/fuzz.zig", "dns-fuzz", "Fuzz the DNS reply parser (args: --seed N --iterations N)");
}

/// A seeded fuzz program, built ReleaseSafe (a tripped safety check is a finding), run by
/// `step_name` with the arguments after `--`.
fn addFuzzStep(b: *std.Build, target: std.Build.ResolvedTarget, name: []const u8, source: []const u8, step_name: []const u8, description: []const u8) void {
    const fuzz = b.addExecutable(.{
        .name = name,
        .root_module = b.createModule(.{
            .root_source_file = b.path(source),
            .target = target,
            .optimize = .ReleaseSafe,
        }),
    });
    const run = b.addRunArtifact(fuzz);
    run.addPassthruArgs();
    b.step(step_name, description).dependOn(&run.step);
}

/// The deterministic simulator (src/sim/): the real proxy on a simulated kernel, with faults.
/// ReleaseSafe: its assertions are the point.
fn addSim(b: *std.Build, target: std.Build.ResolvedTarget, test_step: *std.Build.Step, tls: aws_lc.Library, h2: nghttp2.Library, z: zlib.Library) void {
    const sim = b.addExecutable(.{
        .name = "sim",
        .root_module = b.createModule(.{
            .root_source_file = b.path("src/sim_main.zig"),
            .target = target,
            .optimize = .ReleaseSafe,
        }),
    });
    aws_lc.link(sim, tls); // The proxy it runs can serve TLS and HTTP/2 (not simulated).
    nghttp2.link(sim, h2);
    zlib.link(sim, z);
    test_step.dependOn(&sim.step); // A simulator that stops compiling fails the tests.
    const run = b.addRunArtifact(sim);
    run.addPassthruArgs();
    b.step("sim", "Simulate the data plane (args: --seed N | --seeds N [--first N]; --ticks N)").dependOn(&run.step);
}

/// The programs: the parser alone (ns per request head), the whole data path in one process
/// (requests per second and heap allocations per request), edge policy and gzip per request,
/// and the JavaScript engine (time and allocations per handler call, beside node, Bun and
/// Deno).
fn addBench(b: *std.Build, target: std.Build.ResolvedTarget, test_step: *std.Build.Step, tls: aws_lc.Library, h2: nghttp2.Library, z: zlib.Library) void {
    const step = b.step("bench", "Parser and end-to-end benchmarks");
    var previous: ?*std.Build.Step = null;
    const programs = [_][2][]const u8{
        .{ "bench-http", "src/http/bench.zig" },
        .{ "bench-proxy", "src/bench_proxy.zig" },
        .{ "bench-policy", "src/bench_policy.zig" },
        .{ "bench-compression", "src/bench_compression.zig" },
        .{ "bench-js", "src/js/bench.zig" },
    };
    for (programs) |program| {
        const exe = b.addExecutable(.{
            .name = program[0],
            .root_module = b.createModule(.{
                .root_source_file = b.path(program[1]),
                .target = target,
                .optimize = .ReleaseFast,
            }),
        });
        aws_lc.link(exe, tls);
        nghttp2.link(exe, h2);
        zlib.link(exe, z);
        test_step.dependOn(&exe.step); // Benchmarks that stop compiling fail the tests.
        const run = b.addRunArtifact(exe);
        // Each alone too (`zig build bench-compression`), a program with C libraries included.
        b.step(program[0], b.fmt("Run {s} alone", .{program[1]})).dependOn(&b.addRunArtifact(exe).step);
        // One after the other: they would measure each other otherwise.
        if (previous) |before| run.step.dependOn(before);
        previous = &run.step;
        step.dependOn(&run.step);
    }
}

/// The TLS layer on its own, in memory (src/bench_tls.zig): handshakes per second by key type,
/// full and resumed; allocations per handshake; bytes an idle connection holds; records.
fn addTlsBench(b: *std.Build, target: std.Build.ResolvedTarget, test_step: *std.Build.Step, tls: aws_lc.Library) void {
    const exe = b.addExecutable(.{
        .name = "bench-tls",
        .root_module = b.createModule(.{
            .root_source_file = b.path("src/bench_tls.zig"),
            .target = target,
            .optimize = .ReleaseFast,
        }),
    });
    aws_lc.link(exe, tls);
    test_step.dependOn(&exe.step); // A benchmark that stops compiling fails the tests.
    const run = b.addRunArtifact(exe);
    run.addPassthruArgs();
    b.step("tls-bench", "TLS in memory: handshakes, allocations, bytes per connection").dependOn(&run.step);
}

fn addFmt(b: *std.Build) void {
    const paths: []const std.Build.LazyPath = &.{ b.path("src"), b.path("tools/aws_lc.zig"), b.path("tools/nghttp2.zig"), b.path("tools/zlib.zig"), b.path("tools/crate.zig"), b.path("build.zig"), b.path("build.zig.zon") };
    b.step("fmt", "Format the source tree").dependOn(&b.addFmt(.{ .paths = paths }).step);
    b.step("fmt-check", "Fail if the tree is not formatted").dependOn(&b.addFmt(.{ .paths = paths, .check = true }).step);
}
