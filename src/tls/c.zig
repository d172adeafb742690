//! The part of OpenSSL 3.0's C API that sluice uses, declared by hand: the only file in sluice
//! that names an OpenSSL symbol, and only src/tls/ imports it.
//!
//! Decision: hand-written `extern` declarations rather than `@cImport` of <openssl/ssl.h>.
//! The declarations are fewer lines than the macros they replace would take to work around,
//! they compile in no time (translating ssl.h costs seconds per build), and the build needs
//! only the static archives, not the headers (which on Debian live among glibc's in
//! /usr/include and would shadow musl's). The cost is that a constant copied wrongly is not
//! caught by a compiler: every value below was copied from the 3.0 headers (file named in each
//! group), and the tests exercise each one. The macros of the C API (`SSL_CTX_set_mode` and
//! the like, all `SSL_CTX_ctrl` underneath) are written out as small functions at the end.
const std = @import("std");

pub const SSL_CTX = opaque {};
pub const SSL = opaque {};
pub const SSL_METHOD = opaque {};
pub const SSL_SESSION = opaque {};
pub const SSL_CIPHER = opaque {};
pub const BIO = opaque {};
pub const BIO_METHOD = opaque {};
pub const X509 = opaque {};
pub const X509_NAME = opaque {};
pub const X509_NAME_ENTRY = opaque {};
pub const X509_STORE = opaque {};
pub const X509_VERIFY_PARAM = opaque {};
pub const EVP_PKEY = opaque {};
pub const EVP_CIPHER = opaque {};
pub const EVP_CIPHER_CTX = opaque {};
pub const EVP_MAC_CTX = opaque {};
pub const EVP_MD = opaque {};
pub const ASN1_TIME = opaque {};
pub const ASN1_STRING = opaque {};
pub const GENERAL_NAME = opaque {};
pub const OPENSSL_STACK = opaque {};
pub const OCSP_RESPONSE = opaque {};
pub const OCSP_BASICRESP = opaque {};
pub const OCSP_CERTID = opaque {};

/// <openssl/params.h> `OSSL_PARAM`.
pub const OSSL_PARAM = extern struct {
    key: ?[*:0]const u8,
    data_type: c_uint,
    data: ?*anyopaque,
    data_size: usize,
    return_size: usize,
};

// --- <openssl/crypto.h>, <openssl/ssl.h>: library set-up -------------------------------------

pub const MallocFn = *const fn (usize, [*:0]const u8, c_int) callconv(.c) ?*anyopaque;
pub const ReallocFn = *const fn (?*anyopaque, usize, [*:0]const u8, c_int) callconv(.c) ?*anyopaque;
pub const FreeFn = *const fn (?*anyopaque, [*:0]const u8, c_int) callconv(.c) void;

pub extern fn CRYPTO_set_mem_functions(m: MallocFn, r: ReallocFn, f: FreeFn) c_int;
pub extern fn CRYPTO_malloc(num: usize, file: [*:0]const u8, line: c_int) ?*anyopaque;
pub extern fn CRYPTO_free(ptr: ?*anyopaque, file: [*:0]const u8, line: c_int) void;
pub extern fn OPENSSL_init_ssl(opts: u64, settings: ?*const anyopaque) c_int;
pub extern fn OpenSSL_version_num() c_ulong;

pub const OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS: u64 = 0x00000001;
pub const OPENSSL_INIT_LOAD_CRYPTO_STRINGS: u64 = 0x00000002;
pub const OPENSSL_INIT_NO_ADD_ALL_CIPHERS: u64 = 0x00000010;
pub const OPENSSL_INIT_NO_LOAD_CONFIG: u64 = 0x00000080;
pub const OPENSSL_INIT_NO_ATEXIT: u64 = 0x00080000;
pub const OPENSSL_INIT_LOAD_SSL_STRINGS: u64 = 0x00200000;

// --- <openssl/ssl.h>: contexts ---------------------------------------------------------------

pub extern fn TLS_server_method() *const SSL_METHOD;
pub extern fn TLS_client_method() *const SSL_METHOD;
pub extern fn SSL_CTX_new(method: *const SSL_METHOD) ?*SSL_CTX;
pub extern fn SSL_CTX_free(ctx: ?*SSL_CTX) void;
pub extern fn SSL_CTX_ctrl(ctx: *SSL_CTX, cmd: c_int, larg: c_long, parg: ?*anyopaque) c_long;
pub extern fn SSL_CTX_callback_ctrl(ctx: *SSL_CTX, cmd: c_int, cb: ?*const fn () callconv(.c) void) c_long;
pub extern fn SSL_CTX_set_options(ctx: *SSL_CTX, options: u64) u64;
pub extern fn SSL_CTX_set_cipher_list(ctx: *SSL_CTX, list: [*:0]const u8) c_int;
pub extern fn SSL_CTX_set_ciphersuites(ctx: *SSL_CTX, list: [*:0]const u8) c_int;
pub extern fn SSL_CTX_set_security_level(ctx: *SSL_CTX, level: c_int) void;
pub extern fn SSL_CTX_use_cert_and_key(ctx: *SSL_CTX, x509: *X509, key: *EVP_PKEY, chain: ?*OPENSSL_STACK, override: c_int) c_int;
pub extern fn SSL_CTX_set_alpn_select_cb(ctx: *SSL_CTX, cb: AlpnSelectFn, arg: ?*anyopaque) void;
pub extern fn SSL_CTX_set_alpn_protos(ctx: *SSL_CTX, protos: [*]const u8, len: c_uint) c_int;
pub extern fn SSL_select_next_proto(out: *[*]const u8, outlen: *u8, server: [*]const u8, server_len: c_uint, client: [*]const u8, client_len: c_uint) c_int;
pub extern fn SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx: *SSL_CTX, cb: TicketKeyFn) c_int;
pub extern fn SSL_CTX_set_num_tickets(ctx: *SSL_CTX, count: usize) c_int;
pub extern fn SSL_CTX_set_session_id_context(ctx: *SSL_CTX, sid: [*]const u8, len: c_uint) c_int;
pub extern fn SSL_CTX_set_timeout(ctx: *SSL_CTX, seconds: c_long) c_long;
pub extern fn SSL_CTX_set_verify(ctx: *SSL_CTX, mode: c_int, cb: ?*const anyopaque) void;
pub extern fn SSL_CTX_get_cert_store(ctx: *const SSL_CTX) *X509_STORE;
pub extern fn SSL_CTX_set1_cert_store(ctx: *SSL_CTX, store: *X509_STORE) void;
pub extern fn SSL_CTX_sess_set_new_cb(ctx: *SSL_CTX, cb: NewSessionFn) void;
pub extern fn SSL_CTX_set_ex_data(ctx: *SSL_CTX, index: c_int, data: ?*anyopaque) c_int;
pub extern fn SSL_CTX_get_ex_data(ctx: *const SSL_CTX, index: c_int) ?*anyopaque;

pub const AlpnSelectFn = *const fn (*SSL, *[*]const u8, *u8, [*]const u8, c_uint, ?*anyopaque) callconv(.c) c_int;
pub const TicketKeyFn = *const fn (*SSL, *[16]u8, *[16]u8, *EVP_CIPHER_CTX, *EVP_MAC_CTX, c_int) callconv(.c) c_int;
pub const NewSessionFn = *const fn (*SSL, *SSL_SESSION) callconv(.c) c_int;
pub const ServerNameFn = *const fn (*SSL, *c_int, ?*anyopaque) callconv(.c) c_int;
pub const StatusFn = *const fn (*SSL, ?*anyopaque) callconv(.c) c_int;

pub const TLS1_2_VERSION = 0x0303;
pub const TLS1_3_VERSION = 0x0304;

pub const SSL_OP_NO_TICKET: u64 = 1 << 14;
pub const SSL_OP_NO_COMPRESSION: u64 = 1 << 17;
pub const SSL_OP_NO_RENEGOTIATION: u64 = 1 << 30;

pub const SSL_MODE_ENABLE_PARTIAL_WRITE: c_long = 0x01;
pub const SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER: c_long = 0x02;
pub const SSL_MODE_RELEASE_BUFFERS: c_long = 0x10;

pub const SSL_SESS_CACHE_OFF: c_long = 0x0000;
pub const SSL_SESS_CACHE_CLIENT: c_long = 0x0001;
pub const SSL_SESS_CACHE_NO_INTERNAL_STORE: c_long = 0x0200;

pub const SSL_VERIFY_NONE: c_int = 0x00;
pub const SSL_VERIFY_PEER: c_int = 0x01;
pub const SSL_VERIFY_FAIL_IF_NO_PEER_CERT: c_int = 0x02;

pub const SSL_TLSEXT_ERR_OK: c_int = 0;
pub const SSL_TLSEXT_ERR_ALERT_FATAL: c_int = 2;
pub const SSL_TLSEXT_ERR_NOACK: c_int = 3;
pub const OPENSSL_NPN_NEGOTIATED: c_int = 1;

pub const SSL_AD_NO_APPLICATION_PROTOCOL: c_int = 120;

const SSL_CTRL_MODE = 33;
const SSL_CTRL_SET_SESS_CACHE_MODE = 44;
const SSL_CTRL_SET_MAX_CERT_LIST = 51;
const SSL_CTRL_SET_TLSEXT_SERVERNAME_CB = 53;
const SSL_CTRL_SET_TLSEXT_HOSTNAME = 55;
const SSL_CTRL_SET_TLSEXT_STATUS_REQ_CB = 63;
const SSL_CTRL_SET_TLSEXT_STATUS_REQ_TYPE = 65;
const SSL_CTRL_GET_TLSEXT_STATUS_REQ_OCSP_RESP = 70;
const SSL_CTRL_SET_TLSEXT_STATUS_REQ_OCSP_RESP = 71;
const SSL_CTRL_SET_GROUPS_LIST = 92;
const SSL_CTRL_SET_DH_AUTO = 118;
const SSL_CTRL_SET_MIN_PROTO_VERSION = 123;
const SSL_CTRL_SET_MAX_PROTO_VERSION = 124;
const SSL_CTRL_GET_TLSEXT_STATUS_REQ_TYPE = 127;
const TLSEXT_NAMETYPE_host_name = 0;
pub const TLSEXT_STATUSTYPE_ocsp = 1;

// --- <openssl/ssl.h>: connections ------------------------------------------------------------

pub extern fn SSL_new(ctx: *SSL_CTX) ?*SSL;
pub extern fn SSL_free(ssl: ?*SSL) void;
pub extern fn SSL_set_bio(ssl: *SSL, rbio: *BIO, wbio: *BIO) void;
pub extern fn SSL_get_rbio(ssl: *const SSL) ?*BIO;
pub extern fn SSL_set_accept_state(ssl: *SSL) void;
pub extern fn SSL_set_connect_state(ssl: *SSL) void;
pub extern fn SSL_do_handshake(ssl: *SSL) c_int;
pub extern fn SSL_read_ex(ssl: *SSL, buf: [*]u8, num: usize, readbytes: *usize) c_int;
pub extern fn SSL_write_ex(ssl: *SSL, buf: [*]const u8, num: usize, written: *usize) c_int;
pub extern fn SSL_shutdown(ssl: *SSL) c_int;
pub extern fn SSL_get_error(ssl: *const SSL, ret: c_int) c_int;
pub extern fn SSL_ctrl(ssl: *SSL, cmd: c_int, larg: c_long, parg: ?*anyopaque) c_long;
pub extern fn SSL_get_servername(ssl: *const SSL, kind: c_int) ?[*:0]const u8;
pub extern fn SSL_set_SSL_CTX(ssl: *SSL, ctx: *SSL_CTX) ?*SSL_CTX;
pub extern fn SSL_get_SSL_CTX(ssl: *const SSL) *SSL_CTX;
pub extern fn SSL_get0_alpn_selected(ssl: *const SSL, data: *?[*]const u8, len: *c_uint) void;
pub extern fn SSL_set_session(ssl: *SSL, session: ?*SSL_SESSION) c_int;
pub extern fn SSL_session_reused(ssl: *const SSL) c_int;
pub extern fn SSL_get1_session(ssl: *SSL) ?*SSL_SESSION;
pub extern fn SSL_get_verify_result(ssl: *const SSL) c_long;
pub extern fn SSL_set1_host(ssl: *SSL, hostname: [*:0]const u8) c_int;
pub extern fn SSL_get0_param(ssl: *SSL) *X509_VERIFY_PARAM;
pub extern fn SSL_version(ssl: *const SSL) c_int;
pub extern fn SSL_get_version(ssl: *const SSL) [*:0]const u8;
pub extern fn SSL_get_current_cipher(ssl: *const SSL) ?*const SSL_CIPHER;
pub extern fn SSL_CIPHER_get_name(cipher: ?*const SSL_CIPHER) [*:0]const u8;
pub extern fn SSL_set_ex_data(ssl: *SSL, index: c_int, data: ?*anyopaque) c_int;
pub extern fn SSL_get_ex_data(ssl: *const SSL, index: c_int) ?*anyopaque;
pub extern fn SSL_is_init_finished(ssl: *const SSL) c_int;
pub extern fn SSL_get_certificate(ssl: *const SSL) ?*X509;
pub extern fn SSL_get0_peer_certificate(ssl: *const SSL) ?*X509;
pub extern fn SSL_get_shutdown(ssl: *const SSL) c_int;
pub extern fn SSL_set_shutdown(ssl: *SSL, mode: c_int) void;
pub extern fn SSL_has_pending(ssl: *const SSL) c_int;
pub extern fn SSL_free_buffers(ssl: *SSL) c_int;
pub extern fn SSL_set_num_tickets(ssl: *SSL, count: usize) c_int;
pub extern fn SSL_SESSION_get_protocol_version(session: *const SSL_SESSION) c_int;
pub extern fn SSL_SESSION_get0_ticket(session: *const SSL_SESSION, ticket: *[*]const u8, len: *usize) void;
pub extern fn SSL_renegotiate(ssl: *SSL) c_int;
pub extern fn SSL_clear_options(ssl: *SSL, options: u64) u64;
pub extern fn SSL_SESSION_free(session: ?*SSL_SESSION) void;
pub extern fn SSL_SESSION_is_resumable(session: *const SSL_SESSION) c_int;
pub extern fn X509_VERIFY_PARAM_set1_ip_asc(param: *X509_VERIFY_PARAM, ip: [*:0]const u8) c_int;

pub const SSL_ERROR_NONE = 0;
pub const SSL_ERROR_SSL = 1;
pub const SSL_ERROR_WANT_READ = 2;
pub const SSL_ERROR_WANT_WRITE = 3;
pub const SSL_ERROR_SYSCALL = 5;
pub const SSL_ERROR_ZERO_RETURN = 6;

pub const SSL_SENT_SHUTDOWN = 1;
pub const SSL_RECEIVED_SHUTDOWN = 2;

/// <openssl/ssl3.h>: the largest record body, and what encryption may add to it.
pub const SSL3_RT_HEADER_LENGTH = 5;
pub const SSL3_RT_MAX_PLAIN_LENGTH = 16384;
pub const SSL3_RT_MAX_ENCRYPTED_OVERHEAD = 256 + 64;

// --- <openssl/bio.h> --------------------------------------------------------------------------

pub extern fn BIO_get_new_index() c_int;
pub extern fn BIO_meth_new(kind: c_int, name: [*:0]const u8) ?*BIO_METHOD;
pub extern fn BIO_meth_set_write_ex(method: *BIO_METHOD, f: *const fn (*BIO, [*]const u8, usize, *usize) callconv(.c) c_int) c_int;
pub extern fn BIO_meth_set_read_ex(method: *BIO_METHOD, f: *const fn (*BIO, [*]u8, usize, *usize) callconv(.c) c_int) c_int;
pub extern fn BIO_meth_set_ctrl(method: *BIO_METHOD, f: *const fn (*BIO, c_int, c_long, ?*anyopaque) callconv(.c) c_long) c_int;
pub extern fn BIO_meth_set_create(method: *BIO_METHOD, f: *const fn (*BIO) callconv(.c) c_int) c_int;
pub extern fn BIO_new(method: *const BIO_METHOD) ?*BIO;
pub extern fn BIO_free(bio: ?*BIO) c_int;
pub extern fn BIO_set_data(bio: *BIO, data: ?*anyopaque) void;
pub extern fn BIO_get_data(bio: *BIO) ?*anyopaque;
pub extern fn BIO_set_init(bio: *BIO, init: c_int) void;
pub extern fn BIO_set_flags(bio: *BIO, flags: c_int) void;
pub extern fn BIO_clear_flags(bio: *BIO, flags: c_int) void;
pub extern fn BIO_new_mem_buf(buf: [*]const u8, len: c_int) ?*BIO;

pub const BIO_TYPE_SOURCE_SINK = 0x0400;
pub const BIO_FLAGS_READ = 0x01;
pub const BIO_FLAGS_WRITE = 0x02;
pub const BIO_FLAGS_IO_SPECIAL = 0x04;
pub const BIO_FLAGS_SHOULD_RETRY = 0x08;
pub const BIO_CTRL_EOF = 2;
pub const BIO_CTRL_PUSH = 6;
pub const BIO_CTRL_POP = 7;
pub const BIO_CTRL_PENDING = 10;
pub const BIO_CTRL_FLUSH = 11;
pub const BIO_CTRL_WPENDING = 13;

// --- <openssl/pem.h>, <openssl/x509.h>, <openssl/x509v3.h>, <openssl/asn1.h> ----------------

pub const PasswordFn = *const fn ([*]u8, c_int, c_int, ?*anyopaque) callconv(.c) c_int;

pub extern fn PEM_read_bio_X509(bio: *BIO, x: ?*?*X509, cb: ?PasswordFn, u: ?*anyopaque) ?*X509;
pub extern fn PEM_read_bio_PrivateKey(bio: *BIO, x: ?*?*EVP_PKEY, cb: ?PasswordFn, u: ?*anyopaque) ?*EVP_PKEY;
pub extern fn X509_free(x: ?*X509) void;
pub extern fn X509_up_ref(x: *X509) c_int;
pub extern fn EVP_PKEY_free(key: ?*EVP_PKEY) void;
pub extern fn EVP_PKEY_get_base_id(key: *const EVP_PKEY) c_int;
pub extern fn EVP_PKEY_get_bits(key: *const EVP_PKEY) c_int;
pub extern fn X509_check_private_key(x: *const X509, key: *const EVP_PKEY) c_int;
pub extern fn X509_check_issued(issuer: *X509, subject: *X509) c_int;
pub extern fn X509_verify(x: *X509, key: *EVP_PKEY) c_int;
pub extern fn X509_get0_pubkey(x: *const X509) ?*EVP_PKEY;
pub extern fn X509_get0_notAfter(x: *const X509) *const ASN1_TIME;
pub extern fn X509_get0_notBefore(x: *const X509) *const ASN1_TIME;
pub extern fn ASN1_TIME_diff(days: *c_int, seconds: *c_int, from: ?*const ASN1_TIME, to: ?*const ASN1_TIME) c_int;
pub extern fn X509_get_ext_d2i(x: *const X509, nid: c_int, crit: ?*c_int, idx: ?*c_int) ?*OPENSSL_STACK;
pub extern fn GENERAL_NAME_get0_value(name: *const GENERAL_NAME, kind: *c_int) ?*anyopaque;
pub extern fn GENERAL_NAMES_free(names: ?*OPENSSL_STACK) void;
pub extern fn ASN1_STRING_get0_data(s: *const ASN1_STRING) [*]const u8;
pub extern fn ASN1_STRING_length(s: *const ASN1_STRING) c_int;
pub extern fn X509_get_subject_name(x: *const X509) *X509_NAME;
pub extern fn X509_NAME_get_index_by_NID(name: *const X509_NAME, nid: c_int, lastpos: c_int) c_int;
pub extern fn X509_NAME_get_entry(name: *const X509_NAME, loc: c_int) ?*X509_NAME_ENTRY;
pub extern fn X509_NAME_ENTRY_get_data(entry: *const X509_NAME_ENTRY) *ASN1_STRING;
pub extern fn X509_STORE_new() ?*X509_STORE;
pub extern fn X509_STORE_free(store: ?*X509_STORE) void;
pub extern fn X509_STORE_add_cert(store: *X509_STORE, x: *X509) c_int;
pub extern fn X509_verify_cert_error_string(code: c_long) [*:0]const u8;

pub const NID_commonName = 13;
pub const NID_subject_alt_name = 85;
pub const GEN_DNS = 2;
pub const EVP_PKEY_RSA = 6;
pub const EVP_PKEY_RSA_PSS = 912;
pub const EVP_PKEY_EC = 408;
pub const EVP_PKEY_ED25519 = 1087;
pub const X509_V_OK = 0;

// --- <openssl/ocsp.h> -------------------------------------------------------------------------

pub extern fn d2i_OCSP_RESPONSE(out: ?*?*OCSP_RESPONSE, in: *[*]const u8, len: c_long) ?*OCSP_RESPONSE;
pub extern fn OCSP_RESPONSE_free(response: ?*OCSP_RESPONSE) void;
pub extern fn OCSP_response_status(response: *OCSP_RESPONSE) c_int;
pub extern fn OCSP_response_get1_basic(response: *OCSP_RESPONSE) ?*OCSP_BASICRESP;
pub extern fn OCSP_BASICRESP_free(basic: ?*OCSP_BASICRESP) void;
pub extern fn OCSP_cert_to_id(digest: ?*const EVP_MD, subject: *const X509, issuer: *const X509) ?*OCSP_CERTID;
pub extern fn OCSP_CERTID_free(id: ?*OCSP_CERTID) void;
pub extern fn OCSP_resp_find_status(basic: *OCSP_BASICRESP, id: *OCSP_CERTID, status: *c_int, reason: *c_int, revoked: ?*?*ASN1_TIME, this_update: *?*ASN1_TIME, next_update: *?*ASN1_TIME) c_int;

pub const OCSP_RESPONSE_STATUS_SUCCESSFUL = 0;
pub const V_OCSP_CERTSTATUS_GOOD = 0;
pub const V_OCSP_CERTSTATUS_REVOKED = 1;

// --- <openssl/stack.h> ------------------------------------------------------------------------

pub extern fn OPENSSL_sk_new_null() ?*OPENSSL_STACK;
pub extern fn OPENSSL_sk_push(stack: *OPENSSL_STACK, data: ?*const anyopaque) c_int;
pub extern fn OPENSSL_sk_num(stack: ?*const OPENSSL_STACK) c_int;
pub extern fn OPENSSL_sk_value(stack: *const OPENSSL_STACK, index: c_int) ?*anyopaque;
pub extern fn OPENSSL_sk_free(stack: ?*OPENSSL_STACK) void;

// --- <openssl/err.h> --------------------------------------------------------------------------

pub extern fn ERR_get_error() c_ulong;
pub extern fn ERR_peek_error() c_ulong;
pub extern fn ERR_peek_last_error() c_ulong;
pub extern fn ERR_clear_error() void;
pub extern fn ERR_reason_error_string(code: c_ulong) ?[*:0]const u8;

pub const ERR_LIB_SYS = 2;
pub const ERR_LIB_PEM = 9;
pub const ERR_LIB_SSL = 20;
const ERR_SYSTEM_FLAG: c_ulong = 0x80000000;
const ERR_LIB_OFFSET = 23;
const ERR_LIB_MASK = 0xff;
const ERR_REASON_MASK = 0x7fffff;

/// <openssl/err.h> `ERR_GET_LIB` (an inline function there).
pub fn errLib(code: c_ulong) c_int {
    if (code & ERR_SYSTEM_FLAG != 0) return ERR_LIB_SYS;
    return @intCast((code >> ERR_LIB_OFFSET) & ERR_LIB_MASK);
}

/// <openssl/err.h> `ERR_GET_REASON`.
pub fn errReason(code: c_ulong) c_int {
    if (code & ERR_SYSTEM_FLAG != 0) return @intCast(code & ~ERR_SYSTEM_FLAG);
    return @intCast(code & ERR_REASON_MASK);
}

/// 256 | ERR_R_FATAL (ERR_RFLAG_FATAL 1 << 18 | ERR_RFLAG_COMMON 2 << 18).
pub const ERR_R_MALLOC_FAILURE = 256 | (0x1 << 18) | (0x2 << 18);
pub const PEM_R_NO_START_LINE = 108;
pub const PEM_R_BAD_PASSWORD_READ = 104;
pub const PEM_R_PROBLEMS_GETTING_PASSWORD = 109;
pub const SSL_R_CERTIFICATE_VERIFY_FAILED = 134;
pub const SSL_R_HTTPS_PROXY_REQUEST = 155;
pub const SSL_R_HTTP_REQUEST = 156;
pub const SSL_R_NO_SHARED_CIPHER = 193;
pub const SSL_R_PACKET_LENGTH_TOO_LONG = 198;
pub const SSL_R_NO_PROTOCOLS_AVAILABLE = 191;
pub const SSL_R_NO_APPLICATION_PROTOCOL = 235;
pub const SSL_R_UNKNOWN_PROTOCOL = 252;
pub const SSL_R_UNSUPPORTED_PROTOCOL = 258;
pub const SSL_R_WRONG_VERSION_NUMBER = 267;
pub const SSL_R_UNEXPECTED_EOF_WHILE_READING = 294;
pub const SSL_R_NO_RENEGOTIATION = 339;
pub const SSL_R_VERSION_TOO_LOW = 396;
pub const SSL_R_NO_SHARED_GROUPS = 410;
pub const SSL_R_RECORD_LENGTH_MISMATCH = 213;
/// SSL_R_ values of a received alert are 1000 + the alert's number (SSL_AD_REASON_OFFSET).
pub const SSL_AD_REASON_OFFSET = 1000;
pub const SSL_AD_PROTOCOL_VERSION = 70;
pub const SSL_AD_NO_RENEGOTIATION = 100;

// --- <openssl/rand.h>, <openssl/evp.h>, <openssl/params.h> ------------------------------------

pub extern fn RAND_bytes(buf: [*]u8, num: c_int) c_int;
pub extern fn RAND_priv_bytes(buf: [*]u8, num: c_int) c_int;
pub extern fn EVP_CIPHER_fetch(libctx: ?*anyopaque, algorithm: [*:0]const u8, properties: ?[*:0]const u8) ?*EVP_CIPHER;
pub extern fn EVP_CIPHER_free(cipher: ?*EVP_CIPHER) void;
pub extern fn EVP_EncryptInit_ex(ctx: *EVP_CIPHER_CTX, cipher: *const EVP_CIPHER, engine: ?*anyopaque, key: [*]const u8, iv: [*]const u8) c_int;
pub extern fn EVP_DecryptInit_ex(ctx: *EVP_CIPHER_CTX, cipher: *const EVP_CIPHER, engine: ?*anyopaque, key: [*]const u8, iv: [*]const u8) c_int;
pub extern fn EVP_MAC_CTX_set_params(ctx: *EVP_MAC_CTX, params: [*]const OSSL_PARAM) c_int;
pub extern fn OSSL_PARAM_construct_utf8_string(key: [*:0]const u8, buf: [*:0]const u8, bsize: usize) OSSL_PARAM;
pub extern fn OSSL_PARAM_construct_octet_string(key: [*:0]const u8, buf: *const anyopaque, bsize: usize) OSSL_PARAM;
pub extern fn OSSL_PARAM_construct_end() OSSL_PARAM;

// --- The C API's macros, written out ---------------------------------------------------------

pub fn SSL_CTX_set_mode(ctx: *SSL_CTX, mode: c_long) void {
    _ = SSL_CTX_ctrl(ctx, SSL_CTRL_MODE, mode, null);
}

pub fn SSL_CTX_set_min_proto_version(ctx: *SSL_CTX, version: c_long) bool {
    return SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, version, null) == 1;
}

pub fn SSL_CTX_set_max_proto_version(ctx: *SSL_CTX, version: c_long) bool {
    return SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MAX_PROTO_VERSION, version, null) == 1;
}

pub fn SSL_CTX_set_session_cache_mode(ctx: *SSL_CTX, mode: c_long) void {
    _ = SSL_CTX_ctrl(ctx, SSL_CTRL_SET_SESS_CACHE_MODE, mode, null);
}

pub fn SSL_CTX_set_max_cert_list(ctx: *SSL_CTX, bytes: c_long) void {
    _ = SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MAX_CERT_LIST, bytes, null);
}

pub fn SSL_CTX_set1_groups_list(ctx: *SSL_CTX, list: [*:0]const u8) bool {
    return SSL_CTX_ctrl(ctx, SSL_CTRL_SET_GROUPS_LIST, 0, @constCast(list)) == 1;
}

pub fn SSL_CTX_set_dh_auto(ctx: *SSL_CTX, on: bool) void {
    _ = SSL_CTX_ctrl(ctx, SSL_CTRL_SET_DH_AUTO, @intFromBool(on), null);
}

pub fn SSL_CTX_set_tlsext_servername_callback(ctx: *SSL_CTX, cb: ServerNameFn) void {
    _ = SSL_CTX_callback_ctrl(ctx, SSL_CTRL_SET_TLSEXT_SERVERNAME_CB, @ptrCast(cb));
}

pub fn SSL_CTX_set_tlsext_status_cb(ctx: *SSL_CTX, cb: StatusFn) void {
    _ = SSL_CTX_callback_ctrl(ctx, SSL_CTRL_SET_TLSEXT_STATUS_REQ_CB, @ptrCast(cb));
}

pub fn SSL_set_tlsext_host_name(ssl: *SSL, name: [*:0]const u8) bool {
    return SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name, @constCast(name)) == 1;
}

pub fn SSL_set_tlsext_status_type(ssl: *SSL, kind: c_long) void {
    _ = SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_STATUS_REQ_TYPE, kind, null);
}

/// The OCSP response the server stapled (client side): its length, or -1 when none.
pub fn SSL_get_tlsext_status_ocsp_resp(ssl: *SSL, response: *?[*]const u8) c_long {
    return SSL_ctrl(ssl, SSL_CTRL_GET_TLSEXT_STATUS_REQ_OCSP_RESP, 0, @ptrCast(response));
}

pub fn SSL_get_tlsext_status_type(ssl: *SSL) c_long {
    return SSL_ctrl(ssl, SSL_CTRL_GET_TLSEXT_STATUS_REQ_TYPE, 0, null);
}

/// OpenSSL takes `response` (allocated with OPENSSL_malloc) and frees it with the connection.
pub fn SSL_set_tlsext_status_ocsp_resp(ssl: *SSL, response: [*]u8, len: usize) bool {
    return SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_STATUS_REQ_OCSP_RESP, @intCast(len), response) == 1;
}

pub fn SSL_get_servername_host(ssl: *const SSL) ?[*:0]const u8 {
    return SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
}

pub fn BIO_set_retry_read(bio: *BIO) void {
    BIO_set_flags(bio, BIO_FLAGS_READ | BIO_FLAGS_SHOULD_RETRY);
}

pub fn BIO_set_retry_write(bio: *BIO) void {
    BIO_set_flags(bio, BIO_FLAGS_WRITE | BIO_FLAGS_SHOULD_RETRY);
}

pub fn BIO_clear_retry_flags(bio: *BIO) void {
    BIO_clear_flags(bio, BIO_FLAGS_READ | BIO_FLAGS_WRITE | BIO_FLAGS_IO_SPECIAL | BIO_FLAGS_SHOULD_RETRY);
}

/// `OPENSSL_malloc`: memory OpenSSL will free (through sluice's allocator, like all of it).
pub fn OPENSSL_malloc(len: usize) ?[*]u8 {
    return @ptrCast(CRYPTO_malloc(len, "sluice", 0));
}

test "c: the error-code macros take library and reason apart as <openssl/err.h> does" {
    // ERR_PACK(ERR_LIB_SSL, 0, SSL_R_CERTIFICATE_VERIFY_FAILED)
    const code: c_ulong = (@as(c_ulong, ERR_LIB_SSL) << ERR_LIB_OFFSET) | SSL_R_CERTIFICATE_VERIFY_FAILED;
    try std.testing.expectEqual(@as(c_int, ERR_LIB_SSL), errLib(code));
    try std.testing.expectEqual(@as(c_int, SSL_R_CERTIFICATE_VERIFY_FAILED), errReason(code));
    const system: c_ulong = ERR_SYSTEM_FLAG | 104; // ECONNRESET
    try std.testing.expectEqual(@as(c_int, ERR_LIB_SYS), errLib(system));
    try std.testing.expectEqual(@as(c_int, 104), errReason(system));
    try std.testing.expectEqual(@as(usize, 40), @sizeOf(OSSL_PARAM));
}
