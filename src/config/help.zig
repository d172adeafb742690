//! `sluice --help` and `sluice settings`, written at compile time from the settings table
//! (settings.zig): a flag's line, its value's name and the default it shows come from its row,
//! so the help cannot promise a default or a bound the parser does not keep.
//!
//! `--help` keeps the layout it always had: the flag and its value in a 34-column field, the
//! text after it, continuation lines under the text. `sluice settings` lists every setting,
//! one a line: its flag, its key in a config file, its default on the command line and in a
//! file, and whether a reload applies it. The docs tests read that list to check the README's
//! flag tables and docs/CONFIG.md against the table.
const std = @import("std");
const assert = std.debug.assert;

const settings = @import("settings.zig");
const Setting = settings.Setting;

/// The text of `sluice --help`.
pub const usage: []const u8 = blk: {
    @setEvalBranchQuota(1_000_000);
    var text: []const u8 = header;
    for (std.enums.values(settings.Section)) |section| {
        text = text ++ "\n" ++ sectionTitle(section) ++ "\n";
        for (settings.table) |setting| {
            if (!listedInHelp(setting) or setting.section != section) continue;
            text = text ++ flagLines(setting);
        }
    }
    break :blk text;
};

const header =
    \\sluice: an HTTP/1.1 load balancer and reverse proxy
    \\
    \\usage:
    \\  sluice [--listen ADDR] --backend ADDR [--backend ADDR ...] [options]
    \\  sluice --config FILE [options]          FILE is .zon or .json; flags override it
    \\  sluice check FILE                       validate FILE, print every mistake
    \\  sluice reload --pid-file PATH | --admin ADDR
    \\                                          reload the running instance; print the outcome
    \\  sluice settings                         every setting: flag, file key, default
    \\  sluice demo [--listen ADDR] [options]   two built-in backends behind the proxy
    \\  sluice --help | --version
    \\
    \\addresses: IP:PORT, [IPv6]:PORT, :PORT (all interfaces), localhost:PORT
    \\durations: 500ms, 10s, 2m (a bare number is ms); sizes: 4096, 16KiB, 1MiB
    \\
;

fn sectionTitle(comptime section: settings.Section) []const u8 {
    return switch (section) {
        .options => "options:",
        .balancing => "balancing (the pool of --backend addresses):",
        .health => "health:",
        .retries => "retries and upstream timeouts:",
    };
}

/// A backend's options are documented on `--backend`'s line.
fn listedInHelp(comptime setting: Setting) bool {
    return setting.flag != null and setting.scope != .backend;
}

/// Where a flag's text starts.
const text_column = 36;
/// The longest line `--help` may have.
const line_bytes_max = 88;

/// `  --flag ARG      text`, and the text's further lines under it.
fn flagLines(comptime setting: Setting) []const u8 {
    comptime {
        const name = flagWithArg(setting);
        const indent = spaces(text_column);
        const lead = if (2 + name.len < text_column)
            "  " ++ name ++ spaces(text_column - 2 - name.len)
        else
            "  " ++ name ++ "\n" ++ indent;
        var text: []const u8 = "";
        var lines = std.mem.splitScalar(u8, expand(setting, setting.help), '\n');
        var first = true;
        while (lines.next()) |line| : (first = false) {
            const written = (if (first) lead else indent) ++ line;
            const last_line = written[(std.mem.lastIndexOfScalar(u8, written, '\n') orelse 0)..];
            assert(last_line.len <= line_bytes_max);
            text = text ++ written ++ "\n";
        }
        return text;
    }
}

fn spaces(comptime count: usize) []const u8 {
    const text: [count]u8 = @splat(' ');
    return &text;
}

/// `--listen ADDR`; `--backend` with its options (`ADDR[,weight=N]...`).
fn flagWithArg(comptime setting: Setting) []const u8 {
    comptime {
        const flag = "--" ++ setting.flag.?;
        if (setting.value == .structure and setting.value.structure == .backends) {
            var arg: []const u8 = "ADDR";
            for (settings.table) |option| {
                if (option.scope != .backend or option.flag == null) continue;
                arg = arg ++ "[," ++ option.flag.? ++ "=" ++ option.argName() ++ "]";
            }
            return flag ++ " " ++ arg;
        }
        const arg = setting.argName();
        return if (arg.len == 0) flag else flag ++ " " ++ arg;
    }
}

/// The help text with `{default}`, `{min}`, `{max}` (the row's own) and `{NAME.default}` (a
/// backend option's) written out.
fn expand(comptime setting: Setting, comptime text: []const u8) []const u8 {
    comptime {
        var out: []const u8 = "";
        var rest = text;
        while (std.mem.indexOfScalar(u8, rest, '{')) |open| {
            const close = std.mem.indexOfScalarPos(u8, rest, open, '}').?;
            out = out ++ rest[0..open] ++ placeholder(setting, rest[open + 1 .. close]);
            rest = rest[close + 1 ..];
        }
        return out ++ rest;
    }
}

fn placeholder(comptime setting: Setting, comptime name: []const u8) []const u8 {
    comptime {
        const dot = std.mem.lastIndexOfScalar(u8, name, '.');
        const target = if (dot) |d| backendOption(name[0..d]) else setting;
        const what = if (dot) |d| name[d + 1 ..] else name;
        if (std.mem.eql(u8, what, "default")) return target.defaultText();
        const bounds = switch (target.value) {
            .count, .size, .status_range => |b| b,
            else => @compileError("no bounds for {" ++ name ++ "}"),
        };
        if (std.mem.eql(u8, what, "min")) return std.fmt.comptimePrint("{d}", .{bounds.min});
        if (std.mem.eql(u8, what, "max")) return std.fmt.comptimePrint("{d}", .{bounds.max});
        @compileError("unknown placeholder {" ++ name ++ "}");
    }
}

fn backendOption(comptime flag: []const u8) Setting {
    for (settings.table) |setting| {
        if (setting.scope == .backend and setting.flag != null and std.mem.eql(u8, setting.flag.?, flag)) {
            return setting;
        }
    }
    @compileError("no backend option " ++ flag);
}

// --- sluice settings ---------------------------------------------------------------------------

const Columns = [5][]const u8;

const listing_header: Columns = .{ "flag", "file key", "default", "in a file", "reload" };

fn columns(comptime setting: Setting) Columns {
    comptime {
        const flag: []const u8 = if (setting.value == .structure and setting.value.structure == .backend_address)
            "--backend ADDR"
        else if (setting.flag == null)
            "-"
        else if (setting.scope == .backend)
            "--backend ADDR," ++ setting.flag.? ++ "=" ++ setting.argName()
        else if (setting.value == .structure and setting.value.structure == .backends)
            "--backend"
        else
            flagWithArg(setting);
        const key = if (setting.key == null) "-" else settings.fullKey(setting);
        const reload = switch (setting.scope) {
            .command_line => "-",
            else => @tagName(setting.reload),
        };
        return .{ flag, key, setting.defaultText(), settings.fileDefault(setting) orelse "-", reload };
    }
}

/// The output of `sluice settings`: aligned columns, at least two spaces apart (no value has
/// two spaces in a row, so a script splits on them).
pub const listing: []const u8 = blk: {
    @setEvalBranchQuota(1_000_000);
    var widths: [5]usize = @splat(0);
    for ([_]Columns{listing_header} ++ allColumns()) |row| {
        for (row, &widths) |cell, *width| {
            assert(std.mem.indexOf(u8, cell, "  ") == null);
            width.* = @max(width.*, cell.len);
        }
    }
    var text: []const u8 = "";
    for ([_]Columns{listing_header} ++ allColumns()) |row| {
        for (row, widths, 0..) |cell, width, i| {
            text = text ++ cell ++ if (i + 1 < row.len) spaces(width - cell.len + 2) else "\n";
        }
    }
    break :blk text;
};

fn allColumns() [settings.table.len]Columns {
    var rows: [settings.table.len]Columns = undefined;
    for (settings.table, &rows) |setting, *row| row.* = columns(setting);
    return rows;
}

const testing = std.testing;

test "help: today's layout, with the table's defaults and bounds" {
    try testing.expect(std.mem.indexOf(u8, usage, "\n  --max-connections N               client connections, all workers (default 4096)\n") != null);
    try testing.expect(std.mem.indexOf(u8, usage, "\n  --access-log-format combined|json (default combined)\n") != null);
    try testing.expect(std.mem.indexOf(u8, usage, "\n  --io auto|uring|epoll             event loop backend (default auto: io_uring,\n" ++
        "                                    falling back to epoll when unavailable)\n") != null);
    try testing.expect(std.mem.indexOf(u8, usage, "\n  --backend ADDR[,weight=N][,max-conns=N][,max-pending=N]\n" ++
        "                                    weight 0..1000 (default 1; 0 drains the backend);\n") != null);
    try testing.expect(std.mem.indexOf(u8, usage, "(default 0: no caps)") != null);
    try testing.expect(std.mem.indexOf(u8, usage, "--workers N                       worker threads (default: one per CPU)\n") != null);
    try testing.expect(std.mem.indexOf(u8, usage, "{") == null);
    try testing.expect(std.mem.endsWith(u8, usage, "TLS by ALPN, with --backend-tls); h2 and h2c\n" ++
        "                                    multiplex requests\n"));
}

test "help: every flag is in --help once, and every setting in the listing" {
    inline for (settings.table) |setting| {
        if (comptime listedInHelp(setting)) {
            const line = "\n  --" ++ setting.flag.? ++ " ";
            const line_alone = "\n  --" ++ setting.flag.? ++ "\n";
            const count = std.mem.count(u8, usage, line) + std.mem.count(u8, usage, line_alone);
            try testing.expectEqual(@as(usize, 1), count);
        }
        if (setting.key) |_| {
            const key = comptime settings.fullKey(setting);
            try testing.expect(std.mem.indexOf(u8, listing, "  " ++ key ++ "  ") != null);
        }
    }
    try testing.expect(std.mem.indexOf(u8, listing, "\n--header-bytes-max SIZE ") != null);
    try testing.expect(std.mem.indexOf(u8, listing, "  pools.NAME.backends[].max_connections  0 ") != null);
}
