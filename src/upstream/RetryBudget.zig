//! How many retries one worker may send to a pool: at most `percent` of its requests, plus
//! `min_per_second` so that a quiet pool can still retry at all. When a pool is sick every
//! request fails and wants a retry; the budget is what stops retries from doubling the load on
//! it ("retry storms"). This is the token bucket Finagle and Linkerd use: each request deposits
//! `percent`/100 of a retry, time deposits `min_per_second`, each retry withdraws one.
//! Per worker, so it costs no shared write on the request path.
const std = @import("std");
const assert = std.debug.assert;

const RetryBudget = @This();

/// Tokens are thousandths of a retry.
const token_scale = 1000;

/// Credit earned from traffic is kept up to this many retries, so a busy worker can fail over
/// every request in flight when a backend dies, while a sustained failure still gets only
/// `percent` of requests retried (Linkerd keeps ten seconds of deposits for the same reason).
const credit_retries_max = 1000;

percent: u8,
min_per_second: u32,
/// What time alone can fill the bucket to: one second of the floor (at least 10).
floor_tokens_max: u64,
tokens: u64,
/// The bucket holds at most this many tokens: a burst of this many retries / token_scale.
tokens_max: u64,
refilled_ns: u64,

pub fn init(percent: u8, min_per_second: u32, now_ns: u64) RetryBudget {
    assert(percent <= 100);
    // It starts with one second's floor (at least 10); traffic earns the rest.
    const initial: u64 = @max(10, min_per_second);
    return .{
        .percent = percent,
        .min_per_second = min_per_second,
        .floor_tokens_max = initial * token_scale,
        .tokens = initial * token_scale,
        .tokens_max = @max(initial, credit_retries_max) * token_scale,
        .refilled_ns = now_ns,
    };
}

/// Every request (not retries) earns `percent` hundredths of a retry.
pub fn deposit(budget: *RetryBudget) void {
    budget.tokens = @min(budget.tokens_max, budget.tokens + @as(u64, budget.percent) * 10);
}

/// Takes one retry from the budget, if there is one.
pub fn withdraw(budget: *RetryBudget, now_ns: u64) bool {
    budget.refill(now_ns);
    if (budget.tokens < token_scale) return false;
    budget.tokens -= token_scale;
    return true;
}

fn refill(budget: *RetryBudget, now_ns: u64) void {
    const elapsed_ns = now_ns -| budget.refilled_ns;
    const earned = elapsed_ns * budget.min_per_second / (std.time.ns_per_s / token_scale);
    if (earned == 0) return; // Keep the remainder accruing.
    budget.refilled_ns = now_ns;
    // Time refills only up to one second's floor: an idle hour earns no storm.
    if (budget.tokens < budget.floor_tokens_max) {
        budget.tokens = @min(budget.floor_tokens_max, budget.tokens + earned);
    }
}

test "retry budget: a share of requests, plus a floor per second" {
    var budget: RetryBudget = .init(20, 0, 0);
    // The initial credit.
    for (0..10) |_| try std.testing.expect(budget.withdraw(0));
    try std.testing.expect(!budget.withdraw(0));
    // 100 requests earn 20 retries.
    for (0..100) |_| budget.deposit();
    var granted: u32 = 0;
    while (budget.withdraw(0)) granted += 1;
    try std.testing.expectEqual(@as(u32, 20), granted);
    // Credit is kept up to a limit.
    for (0..100_000) |_| budget.deposit();
    granted = 0;
    while (budget.withdraw(0)) granted += 1;
    try std.testing.expectEqual(@as(u32, credit_retries_max), granted);
    // Steady state: 1000 requests with a retry wanted for each get 20% of them.
    granted = 0;
    for (0..1000) |_| {
        budget.deposit();
        if (budget.withdraw(0)) granted += 1;
    }
    try std.testing.expectEqual(@as(u32, 200), granted);

    var floor: RetryBudget = .init(0, 10, 0);
    while (floor.withdraw(0)) {}
    try std.testing.expect(!floor.withdraw(50 * std.time.ns_per_ms));
    try std.testing.expect(floor.withdraw(100 * std.time.ns_per_ms)); // 10/s: one per 100 ms.
    try std.testing.expect(!floor.withdraw(100 * std.time.ns_per_ms));
    // An idle hour refills one second's floor, not an hour's.
    var granted_after_idle: u32 = 0;
    while (floor.withdraw(3600 * std.time.ns_per_s)) granted_after_idle += 1;
    try std.testing.expectEqual(@as(u32, 10), granted_after_idle);
}
