//! Where a request goes and whether it may, for the exchange (Exchange.zig) that holds it: the
//! current generation's routes matched, the chosen route's settings and header policy (rules,
//! request id, path rewrite) set on the exchange, the allow and deny lists and the rate limits
//! asked, and the affinity a `hash` or `sticky` pool balances on. Decided once per request,
//! before anything is sent; what it sets is read by the rest of the exchange.
const std = @import("std");

const Config = @import("../config/Config.zig");
const rewrite = @import("rewrite.zig");
const affinity = @import("affinity.zig");
const Failure = @import("failure.zig").Failure;
const Router = @import("Router.zig");
const HeaderPolicy = @import("../policy/HeaderPolicy.zig");
const Exchange = @import("Exchange.zig");

/// Follows the current generation's routes, and sets what the route sets. Then whether the
/// client may be served there: null, or the failure that answers it (a 403 from the allow and
/// deny lists, a 429 from the rate limits).
pub fn route(exchange: *Exchange) ?Failure {
    const proxy = exchange.proxy;
    const generation = proxy.generation;
    const routes = generation.config.routes();
    if (routes.len == 0) {
        routeSettings(exchange, null, null, generation.tunnel_slots[0]);
        const config = generation.config;
        exchange.target = if (config.handler.len > 0)
            .{ .handler = generation.handler(config.handlerIndex(config.handler).?, proxy.worker_index) } // Validated.
        else
            .{ .pool = &generation.pools[0].locals[proxy.worker_index] };
        return admit(exchange, null);
    }
    // A connection whose listener is gone from the configuration matches only the routes
    // without a listener condition.
    const listener = std.mem.indexOfScalar(u8, generation.listener_slots, exchange.downstream.client().listener_slot);
    const request = Router.Request.fromHead(exchange.request_head, if (listener) |l| @intCast(l) else 31, proxy.path_scratch);
    const matched = Router.match(routes, &request) orelse {
        proxy.stats.requests_unrouted.add(1);
        routeSettings(exchange, null, null, generation.tunnel_slots[routes.len]);
        exchange.target = .{ .local = null };
        return admit(exchange, null);
    };
    generation.route_requests[proxy.worker_index][matched].add(1);
    const chosen = &routes[matched];
    routeSettings(exchange, chosen, matched, generation.tunnel_slots[matched]);
    exchange.target = switch (chosen.action) {
        .pool => .{ .pool = &generation.pools[chosen.pool].locals[proxy.worker_index] },
        .respond, .redirect => .{ .local = chosen },
        .handler => .{ .handler = generation.handler(chosen.handler, proxy.worker_index) },
    };
    return admit(exchange, matched);
}

/// The allow and deny lists of the top level, the client's listener and route `matched` (null:
/// none), then the rate limits (policy/AccessPolicy.zig, policy/RateLimits.zig): null when the
/// request may go on. Neither written anywhere: two comparisons.
fn admit(exchange: *Exchange, matched: ?usize) ?Failure {
    const proxy = exchange.proxy;
    const generation = proxy.generation;
    if (generation.access == null and generation.rate_limits == null) return null;
    const client = exchange.downstream.client();
    if (generation.access) |*access| {
        const listener = std.mem.indexOfScalar(u8, generation.listener_slots, client.listener_slot);
        if (!access.allows(client.address, listener, matched)) {
            proxy.stats.requests_forbidden.add(1);
            return .forbidden;
        }
    }
    const limits = &(generation.rate_limits orelse return null);
    const evictions = proxy.rate_limiter.evictions_early;
    const verdict = limits.take(&proxy.rate_limiter, client.address, exchange.request_head, matched, exchange.loop().now());
    proxy.stats.rate_limit_evictions.add(proxy.rate_limiter.evictions_early - evictions);
    switch (verdict) {
        .allowed => return null,
        .limited => |wait_ns| {
            proxy.stats.requests_rate_limited.add(1);
            if (matched) |index| generation.route_rate_limited[proxy.worker_index][index].add(1);
            const seconds = std.math.divCeil(u64, wait_ns, std.time.ns_per_s) catch unreachable;
            return .{ .rate_limited = @intCast(@min(seconds, Failure.retry_after_max_s)) };
        },
    }
}

inline fn routeSettings(exchange: *Exchange, chosen: ?*const Config.Route, index: ?usize, tunnel_slot: u8) void {
    const proxy = exchange.proxy;
    exchange.tunnel_queue = &proxy.pool_queues[tunnel_slot];
    exchange.body_bytes_max = proxy.generation.config.requestBodyBytesMax(chosen);
    exchange.compression_settings = proxy.generation.config.compressionFor(chosen);
    // No rules anywhere: one comparison. A request no route took gets sluice's 404, which no
    // rule touches.
    if (proxy.generation.header_policies.len == 0) return;
    if (chosen == null and proxy.generation.config.routes_count > 0) return;
    applyPolicy(exchange, proxy.generation.headerPolicy(index).?, chosen);
}

/// The route's header rules, request id and path rewrite, with this exchange's variables.
fn applyPolicy(exchange: *Exchange, policy: *const HeaderPolicy, chosen: ?*const Config.Route) void {
    const applied = exchange.proxy.policySlot(exchange);
    applied.* = .{};
    exchange.policy = applied;
    if (chosen) |taken| if (taken.rewrite_prefix.len > 0) {
        const target = rewrite.originForm(exchange.request_head);
        // "http://h?q" has the path "/" (RFC 9112 §3.2.1): only a prefix of "/" matches it.
        const path = if (target.prefix.len > 0) "/" else target.path;
        const rest = if (target.prefix.len > 0) target.path else "";
        if (HeaderPolicy.PathRewrite.of(path, taken.path_prefix, taken.rewrite_prefix, exchange.proxy.path_scratch)) |rewritten| {
            // `rest` is the query of "http://h?q" (its path being the implied "/").
            applied.path = if (rest.len == 0) rewritten else .{ .replacement = taken.rewrite_prefix, .rest = rest };
        } else {
            applied.path_refused = true;
        }
    };
    if (policy.needs_request_id) applied.request_id = pickRequestId(exchange, applied);
    const client = exchange.downstream.client();
    applied.variables = .{
        .client_ip = client.ip,
        .request_id = applied.request_id,
        .scheme = if (client.tls) "https" else "http",
        .host = rewrite.requestHost(exchange.request_head) orelse "",
    };
    if (!policy.request.isEmpty()) applied.request = .{ .side = &policy.request, .variables = &applied.variables };
    if (!policy.response.isEmpty()) applied.response = .{ .side = &policy.response, .variables = &applied.variables };
}

/// The client's id when it sent a plain one in the request id field, else a new one.
fn pickRequestId(exchange: *Exchange, applied: *HeaderPolicy.Applied) []const u8 {
    const name = exchange.proxy.generation.config.request_id_header;
    if (name.len > 0) if (exchange.request_head.get(name)) |sent| {
        if (Config.HeaderRules.requestIdValid(sent)) return sent;
    };
    exchange.proxy.stats.request_ids_generated.add(1);
    return exchange.proxy.request_ids.next(&applied.request_id_buffer);
}

/// The key a `hash` pool balances on, or the backend a `sticky` client's cookie names.
pub fn findAffinity(exchange: *Exchange) void {
    const config = exchange.localPool().config;
    const head = exchange.request_head;
    switch (config.strategy) {
        .hash => exchange.key = affinity.requestKey(head, config, exchange.downstream.client().ip),
        .sticky => {
            const value = affinity.cookieValue(head.headers, config.sticky_cookie) orelse return;
            exchange.preferred = exchange.localPool().findIdText(value);
        },
        .round_robin, .weighted, .least_conn, .random => {},
    }
}
