//! Reload, on SIGHUP and `POST /reload`: read the configuration file again with the command
//! line's flags over it (as start-up did), check it, build the next generation
//! (runtime/generations.zig), start the health checkers of the pools it built anew, and
//! publish it to the workers. Any failure leaves everything as it was: the current generation
//! keeps serving and the reason is logged (and answered to `POST /reload`).
//!
//! Decision: a reload gets everything it reads as arguments. The file and the command line
//! are a `Source`, handed over by the main program at start-up and kept in the `Runtime`;
//! the start-up configuration (what a reload may not change), the generations and the
//! workers are the `Runtime`'s. Nothing comes from a global, so a reload can be driven by a
//! test as by the control loop.
const std = @import("std");

const sys = @import("../stdx/sys.zig");
const log = @import("../stdx/log.zig");
const Config = @import("../config/Config.zig");
const cli = @import("../config/cli.zig");
const config_file = @import("../config/file.zig");
const generations_ns = @import("generations.zig");
const reload_outcome = @import("reload_outcome.zig");
const Runtime = @import("Runtime.zig");
const tls = @import("../tls/tls.zig");
const startup = @import("startup.zig");
const Dns = @import("Dns.zig");
const Proxy = @import("../proxy/Proxy.zig");
const Generation = @import("../proxy/Generation.zig");
const Supervisor = @import("Supervisor.zig");
const assert = std.debug.assert;

/// What a reload reads: the configuration file, then the command line's flags over it, as at
/// start-up (so a `--log-level` flag keeps winning over the file's `log_level`). Without a
/// file, the command line over the configuration built into the binary: a reload then reads
/// the files the flags name again (`--handler-file`, `--tls-cert`).
pub const Source = struct {
    /// The configuration file; null: started without `--config`.
    path: ?[]const u8,
    /// What the flags are read over when there is no file: the binary's own configuration
    /// (baked in with `-Dconfig`, or the defaults, with the compiled-in handlers).
    built_in: *const Config = &.{},
    /// The command line without the program name; it must live as long as the runtime.
    args: []const []const u8,
    /// The handlers compiled into the binary (`-Dhandler`): a file is read over them, as at
    /// start-up.
    embedded: []const Config.Handler = &.{},

    /// Loads the file and the flags into `config`, whose strings go into `arena`. False when
    /// either has mistakes: each is a line in `out` (`FILE:LINE:COLUMN: message`, as `sluice
    /// check` prints, or `FLAG: message`).
    pub fn load(source: *const Source, arena: std.mem.Allocator, config: *Config, out: *std.Io.Writer) bool {
        var base: Config = if (source.path == null) source.built_in.* else .{};
        if (source.path) |path| {
            for (source.embedded) |handler| base.setHandler(handler) catch unreachable; // At most the maximum.
            if (!loadFile(arena, path, &base, out)) return false;
        }
        var diagnostic: cli.Diagnostic = .{};
        const parsed = cli.parseOnto(arena, source.args, base, &diagnostic) catch {
            out.print("{s}: {s}\n", .{ diagnostic.flag, diagnostic.message() }) catch {}; // Cut, as below.
            return false;
        };
        config.* = parsed.config;
        return true;
    }

    /// What messages name: the file, or the command line.
    pub fn name(source: *const Source) []const u8 {
        return source.path orelse "the command line";
    }

    fn loadFile(arena: std.mem.Allocator, path: []const u8, base: *Config, out: *std.Io.Writer) bool {
        var problems: config_file.Problems = .{};
        config_file.load(arena, path, base, &problems) catch |err| {
            for (problems.slice()) |problem| {
                out.print("{s}:{d}:{d}: {s}\n", .{ path, problem.position.line, problem.position.column, problem.message }) catch {}; // A fixed buffer: what does not fit is cut.
            }
            if (problems.dropped > 0) out.print("{s}: {d} more problems\n", .{ path, problems.dropped }) catch {}; // Cut, as above.
            if (err == error.OutOfMemory) out.print("{s}: out of memory reading it\n", .{path}) catch {}; // Cut, as above.
            return false;
        };
        return true;
    }
};

/// How reloads went, for `sluice_config_reloads_total` and its companions.
pub const Stats = struct {
    ok: u64 = 0,
    failed: u64 = 0,
    last_ok: bool = true,
    last_unix_seconds: u64 = 0,
};

/// SIGHUP: reload, and log the outcome (one line per problem when it fails).
pub fn reloadAndLog(runtime: *Runtime) void {
    var buffer: [8 * 1024]u8 = undefined;
    var out: std.Io.Writer = .fixed(&buffer);
    _ = reload(runtime, &out);
}

/// `POST /reload` on the admin listener (`Admin.Reloader`): the same, with the outcome as the
/// response.
pub fn adminReload(context: *anyopaque, out: *std.Io.Writer) bool {
    const runtime: *Runtime = @ptrCast(@alignCast(context));
    return reload(runtime, out);
}

/// Loads the config file again and, when it is valid and changes nothing that needs a restart,
/// builds and publishes the next generation. The outcome is logged, written to `out` and,
/// with `--pid-file`, beside the pid file (runtime/reload_outcome.zig, which `sluice reload
/// --pid-file` waits for); on failure nothing changed and the current generation keeps serving.
pub fn reload(runtime: *Runtime, out: *std.Io.Writer) bool {
    const started_ns = sys.clockMonotonicNs();
    if (runtime.notifier) |*notifier| notifier.reloading();
    const succeeded = tryReload(runtime, out);
    runtime.reloads.last_ok = succeeded;
    runtime.reloads.last_unix_seconds = @intCast(@max(0, sys.clockRealtimeSeconds()));
    if (succeeded) runtime.reloads.ok += 1 else runtime.reloads.failed += 1;
    const current = runtime.generations.current().generation.number;
    var lines = std.mem.splitScalar(u8, out.buffered(), '\n');
    while (lines.next()) |line| {
        if (line.len == 0) continue;
        if (succeeded) log.info("{s}", .{line}) else log.err("reload failed: {s}", .{line});
    }
    if (!succeeded) {
        log.err("reload failed: still serving generation {d}", .{current});
        out.print("still serving generation {d}\n", .{current}) catch {}; // Cut, as above.
    }
    if (runtime.notifier) |*notifier| notifier.reloaded(succeeded, current, out.buffered());
    if (runtime.options.pid_file) |pid_path| {
        const outcome: reload_outcome.Outcome = .{
            .started_ns = started_ns,
            .generation = current,
            .applied = succeeded,
            .text = out.buffered(),
        };
        reload_outcome.write(pid_path, &outcome) catch |err| {
            log.warn("cannot write the reload's outcome beside {s}: {s}; `sluice reload " ++
                "--pid-file` will not see it", .{ pid_path, @errorName(err) });
        };
    }
    return succeeded;
}

fn tryReload(runtime: *Runtime, out: *std.Io.Writer) bool {
    const source = runtime.options.reload_source orelse {
        out.writeAll("nothing to reload: the demo's configuration is its own\n") catch {}; // Cut, as above.
        return false;
    };
    const supervisor = &runtime.supervisor;
    if (supervisor.drain_reason != null) {
        out.writeAll("draining: not reloading\n") catch {}; // Cut, as above.
        return false;
    }
    var arena: std.heap.ArenaAllocator = .init(std.heap.page_allocator);
    var keep_arena = false;
    defer if (!keep_arena) arena.deinit();
    const config = arena.allocator().create(Config) catch {
        out.writeAll("out of memory loading the configuration\n") catch {}; // Cut, as above.
        return false;
    };
    config.* = .{};
    if (!source.load(arena.allocator(), config, out)) return false;
    if (config.workers_count == 0) config.workers_count = runtime.config.workers_count; // As resolved.
    config.validate() catch |err| {
        out.print("{s}: invalid configuration: {s}\n", .{ source.name(), config_file.validateMessage(err) }) catch {}; // Cut, as above.
        return false;
    };
    if (generations_ns.restartOnlyChange(runtime.config, config)) |name| {
        out.print("{s}: {s} changed, which needs a restart (see docs/CONFIG.md, Reload)\n", .{ source.name(), name }) catch {}; // Cut, as above.
        return false;
    }
    if (!wantNames(supervisor, config, source, out)) return false;
    var problem: generations_ns.Problem = .{};
    keep_arena = true; // The build owns it now, failing or not.
    // AWS-LC's allocations for starting TLS and for the new TLS contexts (this thread, the
    // general heap) are the reload's, as its arenas are: not counted as heap allocations after
    // start-up.
    const tls_heap_mark = runtime.tlsHeapMark();
    defer runtime.tlsHeapUncount(tls_heap_mark);
    if (config.hasTls() and runtime.tls_ticket_keys == null) {
        // The first HTTPS listener: what start-up does for one, once (kept if the build
        // fails, for the next reload).
        const keys = startup.startTls() catch |err| {
            out.print("{s}: cannot start TLS: {s}\n", .{ source.name(), startup.startTlsReason(err) }) catch {}; // Cut, as above.
            return false;
        };
        runtime.tls_ticket_keys = keys;
        runtime.generations.ticket_keys = keys;
        supervisor.armTicketRotation();
    }
    if ((config.hasTls() or config.usesUpstreamTls()) and !runtime.tls_memory) {
        if (!startWorkerTls(runtime, config)) {
            out.print("{s}: out of memory reserving the workers' TLS memory\n", .{source.name()}) catch {}; // Cut, as above.
            return false;
        }
    }
    const built = runtime.generations.build(arena, config, &problem) catch {
        out.print("{s}\n", .{problem.text()}) catch {}; // Cut, as above.
        return false;
    };
    const generation = &built.generation;
    const members_changed = changeMembers(supervisor, generation);
    for (generation.pools) |instance| {
        if (instance.refs != 1 or instance.checker != null) continue; // Kept, with its checker.
        supervisor.startChecker(instance) catch {
            log.warn("pool {s}: out of memory for its health checker; no active checks", .{instance.config.name});
        };
    }
    for (runtime.workers) |*worker| worker.publish(&built.generation);
    if (supervisor.dns) |d| d.settle(config);
    log.setLevel(config.log_level);
    runtime.generations.logOpened(built, @intCast(runtime.workers.len), runtime.io);
    supervisor.armReap();
    out.print("reloaded {s}: generation {d} ({d} pools: {d} kept, {d} with new members, {d} rebuilt; {d} listeners, {d} opened; {d} routes", .{
        source.name(),
        generation.number,
        generation.pools.len,
        generation.pools.len - built.pools_new,
        members_changed,
        built.pools_new,
        generation.listener_slots.len,
        @popCount(built.opened),
        generation.config.routes_count,
    }) catch {}; // Cut, as above.
    if (generation.handlers.len > 0) {
        out.print("; {d} handlers: {d} kept, {d} compiled", .{
            generation.handlers.len,
            generation.handlers.len - built.handlers_new,
            built.handlers_new,
        }) catch {}; // Cut, as above.
    }
    out.writeAll(")\n") catch {}; // Cut, as above.
    return true;
}

/// The pools a reload kept whose member list changed get the new list as a membership change
/// (upstream/Members.zig), on the same instance: members that stay keep their health and
/// idle connections. The build checked that each fits (`Pool.membersFit`). Each pool's
/// checker follows. Returns how many pools changed. The workers adopt the new tables at their
/// next wake-up (the generation's publication wakes them) or request.
fn changeMembers(supervisor: *Supervisor, generation: *const Generation) u32 {
    var changed: u32 = 0;
    for (generation.pools, generation.config.pools()) |instance, *pool| {
        assert(std.mem.eql(u8, instance.config.name, pool.name));
        if (instance.refs == 1) continue; // Built for this generation from this list.
        // A name this reload added has no answer yet: the members stay until it has one
        // (then `Supervisor.applyNames` changes them), rather than leaving it empty meanwhile.
        if (supervisor.dns) |d| if (Dns.hasNames(pool) and d.awaitsFirstAnswer(pool)) continue;
        const members = Dns.membersOf(supervisor.dns, pool);
        if (instance.sameMembers(members)) continue;
        const change = instance.changeMembers(members) catch |err| {
            // `membersFit` said it fits, so only memory can be short: the members stay as
            // they were until a reload that fits.
            log.warn("pool {s}: members not changed: {s}", .{ pool.name, @errorName(err) });
            continue;
        };
        changed += 1;
        log.info("pool {s}: {d} members joined, {d} left (draining)", .{ pool.name, change.joined_count, change.left_count });
        supervisor.replaceChecker(instance) catch {
            log.warn("pool {s}: out of memory for its health checker; no active checks", .{pool.name});
        };
    }
    return changed;
}

/// A configuration with backends by name: the resolver (made by the first that has one) watches
/// its names before the build looks them up. False when it cannot (said in `out`).
fn wantNames(supervisor: *Supervisor, config: *const Config, source: Source, out: *std.Io.Writer) bool {
    if (supervisor.dns == null) {
        if (!config.usesDns()) return true;
        const d = Dns.create(supervisor.loop, config) catch |err| {
            out.print("{s}: cannot start resolving backend names: {s}\n", .{ source.name(), Dns.initErrorText(err) }) catch {}; // Cut, as above.
            return false;
        };
        d.attach(Supervisor, supervisor, Supervisor.applyNames);
        supervisor.dns = d;
        supervisor.runtime.generations.dns = d;
        return true;
    }
    supervisor.dns.?.want(config) catch {
        out.print("{s}: more than {d} backend names since start-up; restart to apply this configuration\n", .{ source.name(), Dns.names_max }) catch {}; // Cut, as above.
        return false;
    };
    supervisor.dns.?.watch.startDue();
    return true;
}

/// The first TLS (an HTTPS listener or a TLS pool) in a process started without: each worker's
/// TLS memory, sized for `config` as start-up would have sized it (`Proxy.makeTlsPool`), given
/// to the worker before the generation that needs it is published. The workers reserved their
/// TLS buffers at start-up. False when out of memory (nothing given).
fn startWorkerTls(runtime: *Runtime, config: *const Config) bool {
    assert(!runtime.tls_memory);
    const workers_count: u32 = @intCast(runtime.workers.len);
    const sessions = Proxy.sessionsCount(runtime.config, workers_count);
    var pools: [Config.workers_count_max]*tls.memory.Pool = undefined;
    for (pools[0..workers_count], 0..) |*pool, made| {
        pool.* = Proxy.makeTlsPool(std.heap.page_allocator, config, sessions) catch {
            for (pools[0..made]) |unused| {
                unused.deinit(std.heap.page_allocator);
                std.heap.page_allocator.destroy(unused);
            }
            return false;
        };
    }
    for (runtime.workers, pools[0..workers_count]) |*worker, pool| worker.giveTlsPool(pool);
    runtime.tls_memory = true;
    return true;
}

const testing = std.testing;
const linux = std.os.linux;

fn writeTestFile(path: [:0]const u8, text: []const u8) !void {
    const rc = linux.open(path, .{ .ACCMODE = .WRONLY, .CREAT = true, .TRUNC = true, .CLOEXEC = true }, 0o644);
    if (linux.errno(rc) != .SUCCESS) return error.CannotOpen;
    const fd: linux.fd_t = @intCast(rc);
    defer _ = linux.close(fd);
    const written = linux.write(fd, text.ptr, text.len);
    if (linux.errno(written) != .SUCCESS or written != text.len) return error.CannotWrite;
}

test "reload: a source is its file with the command line's flags over it, as at start-up" {
    const path = "/tmp/sluice-reload-source-test.zon";
    defer _ = linux.unlink(path);
    var arena: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena.deinit();
    var buffer: [1024]u8 = undefined;
    var out: std.Io.Writer = .fixed(&buffer);

    try writeTestFile(path,
        \\.{
        \\    .workers = 1,
        \\    .log_level = .info,
        \\    .pools = .{ .app = .{ .backends = .{ "127.0.0.1:9001", "127.0.0.1:9002" } } },
        \\}
    );
    const source: Source = .{ .path = path, .args = &.{ "--config", path, "--workers", "3" } };
    var config: Config = .{};
    try testing.expect(source.load(arena.allocator(), &config, &out));
    try testing.expectEqual(@as(u32, 3), config.workers_count); // The flag wins.
    try testing.expectEqual(Config.LogLevel.info, config.log_level); // From the file.
    try testing.expectEqual(@as(u32, 2), config.pools()[0].backends_count);
    try testing.expectEqualStrings("", out.buffered());

    // A mistake in the file is a line naming its place; nothing is applied.
    try writeTestFile(path, ".{ .workerz = 1 }");
    config = .{};
    try testing.expect(!source.load(arena.allocator(), &config, &out));
    const line = path ++ ":1:4: unknown key \"workerz\"";
    try testing.expect(std.mem.find(u8, out.buffered(), line) != null);
}
