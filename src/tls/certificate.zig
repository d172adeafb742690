//! Certificates and keys: PEM text in, AWS-LC objects out, and what `sluice check` says about
//! a certificate/key pair. The files are read by sluice (the config layer, or `check` here),
//! never by AWS-LC, so every message names the file it is about.
//!
//! Decision: `check` reports everything it finds, each as an error or a warning that starts
//! with the file's name, rather than stopping at the first; a server context refuses only what
//! it cannot serve (no certificate, no key, a key that does not match, a policy refusal),
//! so an operator who skipped `check` still gets a server, and `check` is where the rest
//! (chain order, expiry) is caught.
const std = @import("std");
const linux = std.os.linux;
const assert = std.debug.assert;
const c = @import("aws_lc");
const failure = @import("failure.zig");
const sys = @import("../stdx/sys.zig");
const StaticAllocator = @import("../stdx/StaticAllocator.zig");
const ServerContext = @import("ServerContext.zig");

/// The most certificates one PEM file may hold (a leaf and its chain).
pub const chain_certificates_max = 10;
/// The largest certificate, key or OCSP file read.
pub const file_bytes_max = 1 << 20;
/// The most CA certificates one CA file or bundle may hold.
pub const ca_certificates_max = 1000;
/// sluice's TLS policy for a certificate it serves or shows (AWS-LC has no OpenSSL "security
/// level" to say it): RSA keys at least this long.
pub const rsa_bits_min = 2048;

pub const KeyType = enum { rsa, ecdsa, ed25519, other };

/// One certificate chain and its key, as PEM text, with the names messages use for them.
pub const Source = struct {
    cert_pem: []const u8,
    key_pem: []const u8,
    /// The certificate chain's file, for messages.
    cert_name: []const u8 = "certificate",
    key_name: []const u8 = "key",
    /// A DER OCSP response to staple for this certificate.
    ocsp_der: ?[]const u8 = null,
    ocsp_name: []const u8 = "OCSP response",
};

/// Why loading failed, in one line that names the file.
pub const Diagnostic = struct {
    buffer: [512]u8 = undefined,
    len: usize = 0,

    pub fn set(diagnostic: *Diagnostic, comptime format: []const u8, args: anytype) void {
        const text = std.fmt.bufPrint(&diagnostic.buffer, format, args) catch blk: {
            const ellipsis = "...";
            @memcpy(diagnostic.buffer[diagnostic.buffer.len - ellipsis.len ..], ellipsis);
            break :blk diagnostic.buffer[0..];
        };
        diagnostic.len = text.len;
    }

    pub fn message(diagnostic: *const Diagnostic) []const u8 {
        return diagnostic.buffer[0..diagnostic.len];
    }
};

pub const LoadError = error{ Invalid, OutOfMemory };

/// A leaf certificate, the chain after it, and its private key: references this owns.
pub const Loaded = struct {
    leaf: *c.X509,
    /// The rest of the file's certificates, in file order.
    chain: *Chain,
    key: *c.EVP_PKEY,

    pub fn deinit(loaded: *Loaded) void {
        freeChain(loaded.chain);
        c.X509_free(loaded.leaf);
        c.EVP_PKEY_free(loaded.key);
        loaded.* = undefined;
    }

    pub fn chainCount(loaded: *const Loaded) usize {
        return c.sk_X509_num(loaded.chain);
    }

    pub fn chainAt(loaded: *const Loaded, index: usize) *c.X509 {
        return c.sk_X509_value(loaded.chain, index).?;
    }

    pub fn keyType(loaded: *const Loaded) KeyType {
        return keyTypeOf(loaded.key);
    }
};

/// Parses the chain and the key and checks that the key is the leaf's.
pub fn load(source: Source, diagnostic: *Diagnostic) LoadError!Loaded {
    var certificates = try parseCertificates(source.cert_pem, source.cert_name, diagnostic);
    errdefer certificates.deinit();
    const key = try parseKey(source.key_pem, source.key_name, diagnostic);
    errdefer c.EVP_PKEY_free(key);
    if (c.X509_check_private_key(certificates.leaf, key) != 1) {
        c.ERR_clear_error();
        diagnostic.set("{s}: the key does not match the first certificate in {s}", .{ source.key_name, source.cert_name });
        return error.Invalid;
    }
    return .{ .leaf = certificates.leaf, .chain = certificates.chain, .key = key };
}

/// STACK_OF(X509).
pub const Chain = c.struct_stack_st_X509;

const Certificates = struct {
    leaf: *c.X509,
    chain: *Chain,

    fn deinit(certificates: *Certificates) void {
        freeChain(certificates.chain);
        c.X509_free(certificates.leaf);
    }
};

fn parseCertificates(pem: []const u8, name: []const u8, diagnostic: *Diagnostic) LoadError!Certificates {
    var list = try parseCertificateList(pem, name, chain_certificates_max + 1, diagnostic);
    errdefer list.deinit();
    const leaf = c.sk_X509_shift(list.chain).?;
    return .{ .leaf = leaf, .chain = list.chain };
}

/// Certificates parsed from PEM text, in file order: references this owns.
pub const List = struct {
    chain: *Chain,

    pub fn deinit(list: *List) void {
        freeChain(list.chain);
        list.* = undefined;
    }

    pub fn count(list: *const List) usize {
        return c.sk_X509_num(list.chain);
    }

    pub fn at(list: *const List, index: usize) *c.X509 {
        return c.sk_X509_value(list.chain, index).?;
    }
};

/// Every certificate in `pem` (at least one, at most `count_max`); a block that is not a
/// certificate, or one that does not parse, is an error that names the file.
pub fn parseCertificateList(pem: []const u8, name: []const u8, count_max: usize, diagnostic: *Diagnostic) LoadError!List {
    const bio = try memoryBio(pem);
    defer _ = c.BIO_free(bio);
    const chain: *Chain = c.sk_X509_new_null() orelse return error.OutOfMemory;
    errdefer freeChain(chain);
    var count: usize = 0;
    while (count <= count_max) : (count += 1) {
        const x509 = c.PEM_read_bio_X509(bio, null, noPassword, null) orelse break;
        if (count == count_max) {
            c.X509_free(x509);
            diagnostic.set("{s}: more than {d} certificates", .{ name, count_max });
            return error.Invalid;
        }
        if (c.sk_X509_push(chain, x509) == 0) {
            c.X509_free(x509);
            return error.OutOfMemory;
        }
    }
    // The loop ends at the first PEM block that is not a certificate: the end of the text
    // ("no start line") is the normal case, anything else is a damaged certificate.
    const code = c.ERR_peek_last_error();
    c.ERR_clear_error();
    const at_end = c.ERR_GET_LIB(code) == c.ERR_LIB_PEM and c.ERR_GET_REASON(code) == c.PEM_R_NO_START_LINE;
    if (!at_end) {
        var why: [96]u8 = undefined;
        diagnostic.set("{s}: certificate {d} does not parse: {s}", .{ name, count + 1, failure.reasonText(code, &why) });
        return error.Invalid;
    }
    if (count == 0) {
        diagnostic.set("{s}: no certificate in it (expected PEM blocks \"BEGIN CERTIFICATE\")", .{name});
        return error.Invalid;
    }
    return .{ .chain = chain };
}

/// sluice's policy for a certificate it serves or shows, and its chain: RSA keys of at least
/// `rsa_bits_min` bits, no SHA-1 or MD5 signatures (what OpenSSL's security level 2 refused).
pub fn checkPolicy(loaded: *const Loaded, source: Source, diagnostic: *Diagnostic) LoadError!void {
    if (keyTypeOf(loaded.key) == .rsa) {
        const bits = c.EVP_PKEY_bits(loaded.key);
        if (bits < rsa_bits_min) {
            diagnostic.set("{s}: an RSA key of {d} bits; sluice's TLS policy asks for {d} or more", .{ source.key_name, bits, rsa_bits_min });
            return error.Invalid;
        }
    }
    for (0..loaded.chainCount() + 1) |index| {
        const x509 = if (index == 0) loaded.leaf else loaded.chainAt(index - 1);
        if (weakDigest(x509)) |digest| {
            diagnostic.set("{s}: certificate {d} is signed with {s}, which sluice's TLS policy refuses", .{ source.cert_name, index + 1, digest });
            return error.Invalid;
        }
    }
}

/// "SHA-1" or "MD5" when the certificate's signature uses that digest.
fn weakDigest(x509: *const c.X509) ?[]const u8 {
    var digest: c_int = c.NID_undef;
    var key: c_int = c.NID_undef;
    if (c.OBJ_find_sigid_algs(c.X509_get_signature_nid(x509), &digest, &key) != 1) return null;
    return switch (digest) {
        c.NID_sha1 => "SHA-1",
        c.NID_md5, c.NID_md5_sha1 => "MD5",
        else => null,
    };
}

fn parseKey(pem: []const u8, name: []const u8, diagnostic: *Diagnostic) LoadError!*c.EVP_PKEY {
    const bio = try memoryBio(pem);
    defer _ = c.BIO_free(bio);
    var asked_for_password = false;
    const key = c.PEM_read_bio_PrivateKey(bio, null, noPassword, &asked_for_password);
    const code = c.ERR_peek_last_error();
    c.ERR_clear_error();
    if (key) |found| return found;
    // A traditional encrypted PEM ("Proc-Type: 4,ENCRYPTED") may fail before the password is
    // asked for (a cipher the library does not know): recognized by its header too.
    const traditional_encrypted = std.mem.indexOf(u8, pem, "Proc-Type: 4,ENCRYPTED") != null;
    if (asked_for_password or traditional_encrypted) {
        diagnostic.set("{s}: the key is encrypted, and sluice does not read passphrases (decrypt it: openssl pkey -in KEY -out PLAIN)", .{name});
    } else if (c.ERR_GET_LIB(code) == c.ERR_LIB_PEM and c.ERR_GET_REASON(code) == c.PEM_R_NO_START_LINE) {
        diagnostic.set("{s}: no private key in it (expected a PEM block \"BEGIN PRIVATE KEY\")", .{name});
    } else {
        var why: [96]u8 = undefined;
        diagnostic.set("{s}: the key does not parse: {s}", .{ name, failure.reasonText(code, &why) });
    }
    return error.Invalid;
}

/// AWS-LC would prompt on the terminal for an encrypted key; this says no, and remembers that
/// it was asked.
fn noPassword(buffer: [*c]u8, size: c_int, writing: c_int, asked: ?*anyopaque) callconv(.c) c_int {
    _ = buffer;
    _ = size;
    _ = writing;
    if (asked) |flag| @as(*bool, @ptrCast(flag)).* = true;
    return -1;
}

fn memoryBio(bytes: []const u8) error{OutOfMemory}!*c.BIO {
    assert(bytes.len <= std.math.maxInt(c_int));
    return c.BIO_new_mem_buf(bytes.ptr, @intCast(bytes.len)) orelse error.OutOfMemory;
}

fn freeChain(chain: *Chain) void {
    while (c.sk_X509_pop(chain)) |x509| c.X509_free(x509);
    c.sk_X509_free(chain);
}

pub fn keyTypeOf(key: *const c.EVP_PKEY) KeyType {
    return switch (c.EVP_PKEY_id(key)) {
        c.EVP_PKEY_RSA, c.EVP_PKEY_RSA_PSS => .rsa,
        c.EVP_PKEY_EC => .ecdsa,
        c.EVP_PKEY_ED25519 => .ed25519,
        else => .other,
    };
}

/// The host names a certificate is for, lower-cased, each allocated in `arena`: its
/// subjectAltName DNS entries, or, when it has none, its subject's common name (what
/// pre-2000 certificates did; browsers no longer accept it, and `check` warns).
pub fn hostNames(arena: std.mem.Allocator, x509: *const c.X509) error{OutOfMemory}!Names {
    var list: std.ArrayList([]const u8) = .empty;
    if (c.X509_get_ext_d2i(x509, c.NID_subject_alt_name, null, null)) |extension| {
        const general_names: *c.GENERAL_NAMES = @ptrCast(extension);
        defer c.GENERAL_NAMES_free(general_names);
        for (0..c.sk_GENERAL_NAME_num(general_names)) |index| {
            const general = c.sk_GENERAL_NAME_value(general_names, index);
            var kind: c_int = 0;
            const value = c.GENERAL_NAME_get0_value(general, &kind) orelse continue;
            if (kind != c.GEN_DNS) continue;
            try list.append(arena, try lowerCopy(arena, asn1Bytes(@ptrCast(@alignCast(value)))));
        }
    }
    if (list.items.len > 0) return .{ .names = list.items, .from_common_name = false };
    const subject = c.X509_get_subject_name(x509);
    const at = c.X509_NAME_get_index_by_NID(subject, c.NID_commonName, -1);
    if (at >= 0) {
        if (c.X509_NAME_get_entry(subject, at)) |entry| {
            try list.append(arena, try lowerCopy(arena, asn1Bytes(c.X509_NAME_ENTRY_get_data(entry))));
        }
    }
    return .{ .names = list.items, .from_common_name = true };
}

pub const Names = struct {
    names: []const []const u8,
    /// No subjectAltName: the names are the common name.
    from_common_name: bool,
};

fn asn1Bytes(string: *const c.ASN1_STRING) []const u8 {
    const len: usize = @intCast(@max(0, c.ASN1_STRING_length(string)));
    return c.ASN1_STRING_get0_data(string)[0..len];
}

fn lowerCopy(arena: std.mem.Allocator, text: []const u8) error{OutOfMemory}![]const u8 {
    const copy = try arena.alloc(u8, text.len);
    for (copy, text) |*to, from| to.* = std.ascii.toLower(from);
    return copy;
}

/// The subject's common name, or "(no common name)", for messages.
fn commonName(arena: std.mem.Allocator, x509: *const c.X509) []const u8 {
    const subject = c.X509_get_subject_name(x509);
    const at = c.X509_NAME_get_index_by_NID(subject, c.NID_commonName, -1);
    if (at < 0) return "(no common name)";
    const entry = c.X509_NAME_get_entry(subject, at) orelse return "(no common name)";
    return arena.dupe(u8, asn1Bytes(c.X509_NAME_ENTRY_get_data(entry))) catch "(no memory)";
}

/// The certificate's subject as RFC 4514 writes a distinguished name ("CN=alice,O=Example":
/// the most specific part first, `+` between the parts of one multi-valued RDN), into
/// `buffer`; null when it does not fit. Only printable ASCII comes out: RFC 4514's special
/// characters are escaped with a backslash, and every other byte (control, DEL, UTF-8) as a
/// backslash and two hex digits, so the text can go in a request field and a log line as it
/// is.
pub fn subjectText(x509: *const c.X509, buffer: []u8) ?[]const u8 {
    const name = c.X509_get_subject_name(x509);
    var w: std.Io.Writer = .fixed(buffer);
    const count = c.X509_NAME_entry_count(name);
    var index = count;
    while (index > 0) {
        index -= 1;
        const entry = c.X509_NAME_get_entry(name, index) orelse return null;
        if (index + 1 < count) {
            // Entries of one RDN share its set number: `+` within an RDN, `,` between.
            const next_set = c.X509_NAME_ENTRY_set(c.X509_NAME_get_entry(name, index + 1));
            const separator: u8 = if (next_set == c.X509_NAME_ENTRY_set(entry)) '+' else ',';
            w.writeByte(separator) catch return null;
        }
        writeAttribute(&w, entry) catch return null;
    }
    return w.buffered();
}

fn writeAttribute(w: *std.Io.Writer, entry: *const c.X509_NAME_ENTRY) std.Io.Writer.Error!void {
    const object = c.X509_NAME_ENTRY_get_object(entry);
    const nid = c.OBJ_obj2nid(object);
    if (nid != c.NID_undef) {
        try w.writeAll(std.mem.span(c.OBJ_nid2sn(nid)));
    } else {
        var oid: [80]u8 = undefined;
        const len = c.OBJ_obj2txt(&oid, oid.len, object, 1);
        if (len <= 0 or len >= oid.len) return error.WriteFailed;
        try w.writeAll(oid[0..@intCast(len)]);
    }
    try w.writeByte('=');
    const value = asn1Bytes(c.X509_NAME_ENTRY_get_data(entry));
    for (value, 0..) |byte, i| {
        const first = i == 0;
        const last = i == value.len - 1;
        if (std.mem.indexOfScalar(u8, ",+\"\\<>;=", byte) != null or
            (byte == '#' and first) or (byte == ' ' and (first or last)))
        {
            try w.print("\\{c}", .{byte});
        } else if (byte >= 0x20 and byte <= 0x7e) {
            try w.writeByte(byte);
        } else {
            try w.print("\\{X:0>2}", .{byte});
        }
    }
}

/// Whole days from now until the certificate's notAfter; negative once it has passed.
pub fn daysLeft(x509: *const c.X509) i32 {
    var days: c_int = 0;
    var seconds: c_int = 0;
    if (c.ASN1_TIME_diff(&days, &seconds, null, c.X509_get0_notAfter(x509)) != 1) return -1;
    if (days == 0 and seconds < 0) return -1;
    return days;
}

/// Whole days from now until the certificate's notBefore; positive while it is not valid yet.
fn daysUntilValid(x509: *const c.X509) i32 {
    var days: c_int = 0;
    var seconds: c_int = 0;
    if (c.ASN1_TIME_diff(&days, &seconds, null, c.X509_get0_notBefore(x509)) != 1) return 0;
    if (days == 0 and seconds > 0) return 1;
    return days;
}

// --- check --------------------------------------------------------------------------------

pub const Severity = enum { err, warning };

pub const Finding = struct {
    severity: Severity,
    /// Starts with the file's name: "site.pem: expired 3 days ago".
    message: []const u8,
};

pub const CheckOptions = struct {
    /// Warn when the certificate expires in fewer days than this.
    expiry_warning_days: i32 = 30,
    /// An OCSP response file configured for the certificate.
    ocsp_path: ?[]const u8 = null,
};

/// What `check` found about one certificate/key pair.
pub const Report = struct {
    findings: []const Finding,
    names: []const []const u8 = &.{},
    key_type: ?KeyType = null,
    key_bits: u32 = 0,
    /// Days until the leaf expires (negative: expired); null if it did not load.
    days_left: ?i32 = null,

    pub fn failed(report: *const Report) bool {
        for (report.findings) |finding| {
            if (finding.severity == .err) return true;
        }
        return false;
    }
};

/// Reads and checks a certificate chain file and its key file (the same file may hold both):
/// readable, parses, the key matches the first certificate, each certificate was issued by
/// the next one, none has expired, the leaf's days left (a warning when few), its names, and
/// that sluice's TLS policy accepts them (key size, signature digests). Everything it says is
/// in `Report.findings`, allocated in `arena`, each naming its file.
pub fn check(arena: std.mem.Allocator, cert_path: []const u8, key_path: []const u8, options: CheckOptions) error{OutOfMemory}!Report {
    var findings: std.ArrayList(Finding) = .empty;
    const cert_pem = readFile(arena, cert_path, &findings) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        error.CannotRead => null,
    };
    const key_pem = readFile(arena, key_path, &findings) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        error.CannotRead => null,
    };
    const ocsp_der: ?[]const u8 = if (options.ocsp_path) |path| readFile(arena, path, &findings) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        error.CannotRead => null,
    } else null;
    if (cert_pem == null or key_pem == null or (options.ocsp_path != null and ocsp_der == null)) {
        return .{ .findings = findings.items };
    }
    return checkSource(arena, .{
        .cert_pem = cert_pem.?,
        .key_pem = key_pem.?,
        .cert_name = cert_path,
        .key_name = key_path,
        .ocsp_der = ocsp_der,
        .ocsp_name = options.ocsp_path orelse "",
    }, options, &findings);
}

/// Reads and checks a CA file for clients' certificates (a listener's `client_ca`): readable,
/// every PEM block a certificate, none expired (an expired CA verifies no client). The report's
/// `names` are the CAs' common names.
pub fn checkCa(arena: std.mem.Allocator, path: []const u8) error{OutOfMemory}!Report {
    var findings: std.ArrayList(Finding) = .empty;
    const pem = readFile(arena, path, &findings) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        error.CannotRead => return .{ .findings = findings.items },
    };
    var diagnostic: Diagnostic = .{};
    var list = parseCertificateList(pem, path, ca_certificates_max, &diagnostic) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        error.Invalid => {
            try add(arena, &findings, .err, "{s}", .{diagnostic.message()});
            return .{ .findings = findings.items };
        },
    };
    defer list.deinit();
    var names: std.ArrayList([]const u8) = .empty;
    for (0..list.count()) |index| {
        const ca = list.at(index);
        try names.append(arena, commonName(arena, ca));
        if (daysLeft(ca) < 0) {
            try add(arena, &findings, .err, "{s}: certificate {d} ({s}) has expired ({d} days ago)", .{ path, index + 1, commonName(arena, ca), expiredDaysAgo(ca) });
        }
    }
    return .{ .findings = findings.items, .names = names.items };
}

fn checkSource(arena: std.mem.Allocator, source: Source, options: CheckOptions, findings: *std.ArrayList(Finding)) error{OutOfMemory}!Report {
    var diagnostic: Diagnostic = .{};
    var certificates = parseCertificates(source.cert_pem, source.cert_name, &diagnostic) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        error.Invalid => {
            try add(arena, findings, .err, "{s}", .{diagnostic.message()});
            return .{ .findings = findings.items };
        },
    };
    defer certificates.deinit();
    var report: Report = .{ .findings = &.{} };
    const leaf = certificates.leaf;
    const names = try hostNames(arena, leaf);
    report.names = names.names;
    report.days_left = daysLeft(leaf);

    if (parseKey(source.key_pem, source.key_name, &diagnostic)) |key| {
        defer c.EVP_PKEY_free(key);
        report.key_type = keyTypeOf(key);
        report.key_bits = @intCast(@max(0, c.EVP_PKEY_bits(key)));
        try checkKeyMatches(arena, findings, source, &certificates, key);
    } else |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        error.Invalid => try add(arena, findings, .err, "{s}", .{diagnostic.message()}),
    }
    try checkChainOrder(arena, findings, source.cert_name, &certificates);
    try checkDates(arena, findings, source.cert_name, &certificates, options);
    if (names.names.len == 0) {
        try add(arena, findings, .err, "{s}: the certificate names no host (no subjectAltName DNS entry, no common name)", .{source.cert_name});
    } else if (names.from_common_name) {
        try add(arena, findings, .warning, "{s}: no subjectAltName: clients that follow RFC 6125 (every browser) reject a certificate named only by its common name ({s})", .{ source.cert_name, names.names[0] });
    }
    // Last, and only when nothing above failed: would a server take it? This is the real
    // loader, so it also checks sluice's policy (key sizes, digests) and the OCSP response.
    const failed_so_far = for (findings.items) |finding| {
        if (finding.severity == .err) break true;
    } else false;
    if (!failed_so_far) {
        var server: ServerContext = undefined;
        if (server.init(arena, .{ .certificates = &.{source} }, &diagnostic)) {
            server.deinit();
        } else |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            error.Invalid => try add(arena, findings, .err, "{s}", .{diagnostic.message()}),
        }
    }
    report.findings = findings.items;
    return report;
}

fn checkKeyMatches(arena: std.mem.Allocator, findings: *std.ArrayList(Finding), source: Source, certificates: *const Certificates, key: *c.EVP_PKEY) !void {
    if (c.X509_check_private_key(certificates.leaf, key) == 1) return;
    c.ERR_clear_error();
    // The key may belong to a later certificate: then the leaf is not first.
    for (0..c.sk_X509_num(certificates.chain)) |index| {
        const x509 = c.sk_X509_value(certificates.chain, index).?;
        if (c.X509_check_private_key(x509, key) == 1) {
            try add(arena, findings, .err, "{s}: the key matches certificate {d} ({s}), not the first: the certificate the key belongs to must come first, then its issuers", .{ source.cert_name, index + 2, commonName(arena, x509) });
            return;
        }
        c.ERR_clear_error();
    }
    try add(arena, findings, .err, "{s}: the key does not match the certificate in {s} ({s})", .{ source.key_name, source.cert_name, commonName(arena, certificates.leaf) });
}

/// Each certificate must have been issued (and signed) by the one after it.
fn checkChainOrder(arena: std.mem.Allocator, findings: *std.ArrayList(Finding), name: []const u8, certificates: *const Certificates) !void {
    var subject = certificates.leaf;
    for (0..c.sk_X509_num(certificates.chain)) |index| {
        const issuer = c.sk_X509_value(certificates.chain, index).?;
        const issued = c.X509_check_issued(issuer, subject) == c.X509_V_OK;
        const signed = issued and blk: {
            const public_key = c.X509_get0_pubkey(issuer) orelse break :blk false;
            break :blk c.X509_verify(subject, public_key) == 1;
        };
        c.ERR_clear_error();
        if (!signed) {
            try add(arena, findings, .err, "{s}: certificate {d} ({s}) did not issue certificate {d} ({s}): the chain must list the server's certificate first, then each issuer in turn", .{ name, index + 2, commonName(arena, issuer), index + 1, commonName(arena, subject) });
            return;
        }
        subject = issuer;
    }
}

fn checkDates(arena: std.mem.Allocator, findings: *std.ArrayList(Finding), name: []const u8, certificates: *const Certificates, options: CheckOptions) !void {
    const leaf_days = daysLeft(certificates.leaf);
    if (leaf_days < 0) {
        try add(arena, findings, .err, "{s}: the certificate ({s}) has expired ({d} days ago)", .{ name, commonName(arena, certificates.leaf), expiredDaysAgo(certificates.leaf) });
    } else if (leaf_days < options.expiry_warning_days) {
        try add(arena, findings, .warning, "{s}: the certificate ({s}) expires in {d} days", .{ name, commonName(arena, certificates.leaf), leaf_days });
    }
    const not_yet = daysUntilValid(certificates.leaf);
    if (not_yet > 0) {
        try add(arena, findings, .warning, "{s}: the certificate ({s}) is not valid for another {d} days", .{ name, commonName(arena, certificates.leaf), not_yet });
    }
    for (0..c.sk_X509_num(certificates.chain)) |index| {
        const x509 = c.sk_X509_value(certificates.chain, index).?;
        if (daysLeft(x509) < 0) {
            try add(arena, findings, .err, "{s}: certificate {d} ({s}) has expired ({d} days ago)", .{ name, index + 2, commonName(arena, x509), expiredDaysAgo(x509) });
        }
    }
}

fn expiredDaysAgo(x509: *const c.X509) i32 {
    var days: c_int = 0;
    var seconds: c_int = 0;
    if (c.ASN1_TIME_diff(&days, &seconds, c.X509_get0_notAfter(x509), null) != 1) return 0;
    return days;
}

fn add(arena: std.mem.Allocator, findings: *std.ArrayList(Finding), severity: Severity, comptime format: []const u8, args: anytype) error{OutOfMemory}!void {
    try findings.append(arena, .{ .severity = severity, .message = try std.fmt.allocPrint(arena, format, args) });
}

/// The whole file, or a finding that names it and says why not.
pub fn readFile(arena: std.mem.Allocator, path: []const u8, findings: *std.ArrayList(Finding)) error{ CannotRead, OutOfMemory }![]const u8 {
    var why: []const u8 = undefined;
    if (readFileOrWhy(arena, path, &why)) |bytes| return bytes else |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        error.CannotRead => {
            try add(arena, findings, .err, "{s}: {s}", .{ path, why });
            return error.CannotRead;
        },
    }
}

/// The whole file; on failure `why` says why ("cannot open: no such file").
pub fn readFileOrWhy(arena: std.mem.Allocator, path: []const u8, why: *[]const u8) error{ CannotRead, OutOfMemory }![]const u8 {
    const path_z = try arena.dupeSentinel(u8, path, 0);
    const rc = linux.open(path_z, .{ .ACCMODE = .RDONLY, .CLOEXEC = true }, 0);
    switch (linux.errno(rc)) {
        .SUCCESS => {},
        .NOENT => return cannot(why, "cannot open: no such file"),
        .ACCES, .PERM => return cannot(why, "cannot open: permission denied"),
        .ISDIR => return cannot(why, "cannot open: it is a directory"),
        else => return cannot(why, "cannot open"),
    }
    const fd: linux.fd_t = @intCast(rc);
    defer _ = linux.close(fd);
    // Untouched: `alloc` would fill all of it with 0xAA in safe builds, 257 page faults per
    // file at start-up; only the pages the file's bytes land in are touched.
    const buffer = try StaticAllocator.allocUntouched(arena, u8, null, file_bytes_max + 1);
    var len: usize = 0;
    while (len < buffer.len) {
        const n = sys.read(fd, buffer[len..]) catch return cannot(why, "cannot read (is it a directory?)");
        if (n == 0) break;
        len += n;
    }
    if (len > file_bytes_max) return cannot(why, "larger than 1 MiB: not a certificate, key or OCSP response");
    return buffer[0..len];
}

fn cannot(why: *[]const u8, text: []const u8) error{CannotRead} {
    why.* = text;
    return error.CannotRead;
}

// --- Tests: what `check` says about the test certificates (src/tls/testdata/) ---------------

const testing = std.testing;
const testdata = @import("testdata.zig");

/// `check` on in-memory PEM, as it runs on the files' contents.
fn checkTestSource(arena: std.mem.Allocator, source: Source) !Report {
    try @import("tls.zig").init(.{});
    var findings: std.ArrayList(Finding) = .empty;
    return checkSource(arena, source, .{}, &findings);
}

fn expectFinding(report: *const Report, severity: Severity, message: []const u8) !void {
    for (report.findings) |finding| {
        if (finding.severity == severity and std.mem.eql(u8, finding.message, message)) return;
    }
    for (report.findings) |finding| std.debug.print("finding: {t}: {s}\n", .{ finding.severity, finding.message });
    return error.TestExpectedFinding;
}

test "certificate: check passes a good chain and key, with its names, key and days left" {
    var arena_state: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena_state.deinit();
    for ([_]struct { source: Source, key_type: KeyType, bits: u32 }{
        .{ .source = testdata.ecdsa, .key_type = .ecdsa, .bits = 256 },
        .{ .source = testdata.rsa, .key_type = .rsa, .bits = 2048 },
    }) |case| {
        const report = try checkTestSource(arena_state.allocator(), case.source);
        try testing.expectEqual(@as(usize, 0), report.findings.len);
        try testing.expect(!report.failed());
        try testing.expectEqual(case.key_type, report.key_type.?);
        try testing.expectEqual(case.bits, report.key_bits);
        try testing.expect(report.days_left.? > 365 * 50); // made for 100 years
        try testing.expect(report.names.len == 2);
    }
}

test "certificate: check refuses an expired certificate, a key of another certificate, a chain out of order, an encrypted key" {
    var arena_state: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    {
        const report = try checkTestSource(arena, testdata.expired);
        try testing.expect(report.failed());
        try testing.expect(report.days_left.? < 0);
        const days = blk: {
            var diagnostic: Diagnostic = .{};
            var certificates = try parseCertificates(testdata.expired.cert_pem, "expired.pem", &diagnostic);
            defer certificates.deinit();
            break :blk expiredDaysAgo(certificates.leaf);
        };
        try testing.expect(days > 365 * 5); // it expired on 2021-01-01
        try expectFinding(&report, .err, try std.fmt.allocPrint(arena, "expired.pem: the certificate (expired.test) has expired ({d} days ago)", .{days}));
    }
    {
        var mismatched = testdata.rsa;
        mismatched.key_pem = testdata.ecdsa.key_pem;
        mismatched.key_name = "ecdsa.key";
        const report = try checkTestSource(arena, mismatched);
        try expectFinding(&report, .err, "ecdsa.key: the key does not match the certificate in rsa.pem (rsa.test)");
    }
    {
        const report = try checkTestSource(arena, testdata.wrong_order);
        try expectFinding(&report, .err, "wrong-order.pem: the key matches certificate 2 (ecdsa.test), not the first: " ++
            "the certificate the key belongs to must come first, then its issuers");
        try expectFinding(&report, .err, "wrong-order.pem: certificate 2 (ecdsa.test) did not issue certificate 1 " ++
            "(sluice test intermediate): the chain must list the server's certificate first, then each issuer in turn");
    }
    {
        var encrypted = testdata.ecdsa;
        encrypted.key_pem = testdata.encrypted_key;
        encrypted.key_name = "encrypted.key";
        const report = try checkTestSource(arena, encrypted);
        try expectFinding(&report, .err, "encrypted.key: the key is encrypted, and sluice does not read " ++
            "passphrases (decrypt it: openssl pkey -in KEY -out PLAIN)");
    }
    {
        var encrypted = testdata.ecdsa;
        encrypted.key_pem = testdata.encrypted_traditional_key;
        encrypted.key_name = "encrypted-traditional.key";
        const report = try checkTestSource(arena, encrypted);
        try expectFinding(&report, .err, "encrypted-traditional.key: the key is encrypted, and sluice does " ++
            "not read passphrases (decrypt it: openssl pkey -in KEY -out PLAIN)");
    }
}

test "certificate: check warns about a certificate named only by its common name, and one about to expire" {
    var arena_state: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    const report = try checkTestSource(arena, testdata.cn_only);
    try testing.expect(!report.failed());
    try expectFinding(&report, .warning, "cn-only.pem: no subjectAltName: clients that follow RFC 6125 " ++
        "(every browser) reject a certificate named only by its common name (cn-only.test)");
    var findings: std.ArrayList(Finding) = .empty;
    const soon = try checkSource(arena, testdata.ecdsa, .{ .expiry_warning_days = 365 * 200 }, &findings);
    const days = soon.days_left.?;
    try expectFinding(&soon, .warning, try std.fmt.allocPrint(arena, "ecdsa.pem: the certificate (ecdsa.test) expires in {d} days", .{days}));
}

test "certificate: check names a file it cannot read, and says why" {
    var arena_state: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena_state.deinit();
    const report = try check(arena_state.allocator(), "/nonexistent/site.pem", "/proc", .{});
    try testing.expect(report.failed());
    try expectFinding(&report, .err, "/nonexistent/site.pem: cannot open: no such file");
    try expectFinding(&report, .err, "/proc: cannot read (is it a directory?)");
}
