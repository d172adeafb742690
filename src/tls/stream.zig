//! A socket's TLS, driven on a `Loop` for an owner that reads and writes plaintext: the one
//! implementation of the handshake and of every receive and send over records, shared by a
//! client connection (`proxy/DownstreamTls.zig`) and an exchange's try on a backend
//! (`proxy/UpstreamTls.zig`). The owner keeps what differs (which engine, which socket and
//! completions, its lifecycle, what a failure means to it) and says it through `Hooks`; this
//! file keeps what must not differ between them: how records are received, decrypted,
//! sealed and sent, when a call may complete at once (`Loop.recvReady`, never a callback from
//! inside a call), and what the end of the peer's stream means.
//!
//! A generic over the owner, not a table of function pointers: each owner's instance is the
//! code that owner had written out by hand (its hooks are direct calls the compiler inlines),
//! so sharing it costs nothing per request.
//!
//! The contract with the owner: one receive and one send at a time, each counted by the owner
//! as one operation and completed with one callback (a receive may chain several socket reads
//! while a record arrives in pieces, a send several writes); the callbacks are the owner's
//! `RecvCallback` and `SendCallback`, given per call as comptime functions.
const std = @import("std");
const assert = std.debug.assert;

const sys = @import("../stdx/sys.zig");
const loop_ns = @import("../loop/loop.zig");
const Ciphertext = @import("Ciphertext.zig");
const Engine = @import("Engine.zig");
const Failure = @import("failure.zig").Failure;
const memory = @import("memory.zig");

/// How the socket failed under a handshake.
pub const Broken = union(enum) { send: sys.SendError, recv: sys.RecvError };

/// The stream's own state, kept in the owner (one per connection or try).
pub fn State(comptime Owner: type) type {
    return struct {
        /// Records received and to send, in two of the worker's buffers.
        records: Ciphertext,
        /// The receive and the send under way for the owner, and their callbacks.
        plain_recv: []u8 = &.{},
        recv_callback: *const fn (*Owner, sys.RecvError!usize) void = undefined,
        plain_send: []const u8 = &.{},
        send_callback: *const fn (*Owner, sys.SendError!usize) void = undefined,
        /// Plaintext of `plain_send` sealed into records, reported when they have gone out.
        send_taken: usize = 0,
        /// What the handshake needs once its output is sent.
        handshake_next: Engine.Progress = .want_read,
    };
}

/// What the owner tells the stream: where its parts are, and what an event means to it.
pub fn Hooks(comptime Owner: type) type {
    return struct {
        state: fn (*Owner) *State(Owner),
        engine: fn (*Owner) *Engine,
        socket: fn (*Owner) *loop_ns.Socket,
        loop: fn (*Owner) *loop_ns.Loop,
        recv_completion: fn (*Owner) *loop_ns.Completion,
        send_completion: fn (*Owner) *loop_ns.Completion,
        /// One more operation in flight (the owner counts them, for its end).
        submit: fn (*Owner) void,
        /// The owner is going away: a socket completion is reported `error.Canceled`.
        ending: fn (*Owner) bool,

        /// The peer's stream ended without close_notify. `.end`: as an EOF (a client: the
        /// framing above decides what is complete). `.reset`: maybe a truncation, never an end
        /// (a backend's close-delimited body cut short must not pass as complete).
        truncation: enum { end, reset },
        /// A read may write an alert at once (the fatal no_renegotiation answer, or what ends a
        /// connection on a bad record) when no send is in flight: a client waiting for it is
        /// not left hanging. A backend's gets none (its connection is dropped anyway).
        answers_alerts: bool,
        /// The engine failed to read (a bad record, an alert): said before the reset is
        /// reported. Null: nothing to say.
        read_failed: ?fn (*Owner) void = null,
        /// A send failed with a reset or a broken pipe: the peer may have said why first.
        send_reset: ?fn (*Owner) void = null,

        /// A handshake's socket completion arrived: true when the owner took it over (it is
        /// ending, or a deadline passed) and the handshake must not go on.
        handshake_stops: fn (*Owner) bool,
        /// The handshake is complete.
        handshake_done: fn (*Owner) void,
        /// The engine refused the handshake (`err`); its alert, if any, is in the records.
        handshake_failed: fn (*Owner, Failure) void,
        /// The socket failed under the handshake.
        handshake_broken: fn (*Owner, Broken) void,
        /// The memory AWS-LC runs in for this owner, entered around every engine call. Null: the
        /// thread's own (a worker enters its pool once; the control thread's health probes
        /// enter their pool's around each call).
        memory: ?fn (*Owner) *memory.Pool = null,
    };
}

pub fn Stream(comptime Owner: type, comptime hooks: Hooks(Owner)) type {
    return struct {
        pub const RecvCallback = fn (*Owner, sys.RecvError!usize) void;
        pub const SendCallback = fn (*Owner, sys.SendError!usize) void;

        inline fn enter(owner: *Owner) void {
            if (hooks.memory) |pool| pool(owner).enter();
        }

        inline fn leave(owner: *Owner) void {
            if (hooks.memory) |pool| pool(owner).leave();
        }

        // --- The handshake ---------------------------------------------------------------

        /// Runs the engine's handshake as far as it goes, then sends its output or waits for
        /// the peer's; ends in `handshake_done` or `handshake_failed`.
        pub fn handshakeStep(owner: *Owner) void {
            const state = hooks.state(owner);
            var w = state.records.wire();
            enter(owner);
            const progress = hooks.engine(owner).handshake(&w);
            leave(owner);
            state.records.settle(&w);
            state.handshake_next = progress catch |err| return hooks.handshake_failed(owner, err);
            if (state.records.outputPending()) return handshakeSend(owner);
            handshakeContinue(owner);
        }

        fn handshakeContinue(owner: *Owner) void {
            const state = hooks.state(owner);
            assert(!state.records.outputPending());
            state.records.clearOutput();
            switch (state.handshake_next) {
                .done => hooks.handshake_done(owner),
                .want_read => {
                    hooks.submit(owner);
                    hooks.loop(owner).recv(hooks.recv_completion(owner), hooks.socket(owner), state.records.room(), Owner, owner, handshakeRecvCallback);
                },
                .want_write => handshakeStep(owner), // The output is out: room again.
            }
        }

        fn handshakeSend(owner: *Owner) void {
            hooks.submit(owner);
            hooks.loop(owner).send(hooks.send_completion(owner), hooks.socket(owner), hooks.state(owner).records.unsent(), Owner, owner, handshakeSendCallback);
        }

        fn handshakeSendCallback(owner: *Owner, result: sys.SendError!usize) void {
            if (hooks.handshake_stops(owner)) return;
            const n = result catch |err| return hooks.handshake_broken(owner, .{ .send = err });
            const records = &hooks.state(owner).records;
            records.sent(n);
            if (records.outputPending()) return handshakeSend(owner);
            handshakeContinue(owner);
        }

        fn handshakeRecvCallback(owner: *Owner, result: sys.RecvError!usize) void {
            if (hooks.handshake_stops(owner)) return;
            const n = result catch |err| return hooks.handshake_broken(owner, .{ .recv = err });
            hooks.state(owner).records.received(n);
            handshakeStep(owner);
        }

        // --- Receive ---------------------------------------------------------------------

        /// The owner's receive (counted by it): plaintext from what is held, else more records.
        pub fn recv(owner: *Owner, buffer: []u8, comptime callback: RecvCallback) void {
            const state = hooks.state(owner);
            assert(buffer.len > 0);
            state.plain_recv = buffer;
            state.recv_callback = callback;
            recvStep(owner);
        }

        fn recvStep(owner: *Owner) void {
            const state = hooks.state(owner);
            const records = &state.records;
            var w = records.wire();
            // A read writes no record of data: AWS-LC sends a KeyUpdate's answer with the next
            // write. It may write an alert (`answers_alerts`), which goes out at once when no
            // send is in flight: bytes of ours cannot overtake a record half sent.
            var alert: [64]u8 = undefined;
            const may_answer = hooks.answers_alerts and
                !hooks.send_completion(owner).isPending() and !records.outputPending();
            w.output = if (may_answer) &alert else &.{};
            const engine = hooks.engine(owner);
            enter(owner);
            const result = engine.read(&w, state.plain_recv);
            leave(owner);
            w.output = &.{}; // The alert, if any, is not the records' output buffer's.
            const answer = alert[0..w.produced];
            w.produced = 0;
            records.settle(&w);
            if (answer.len > 0) _ = hooks.loop(owner).sendNow(hooks.socket(owner), answer) catch {}; // Best effort.
            const read = result catch {
                if (hooks.read_failed) |said| said(owner);
                return recvDone(owner, error.ConnectionResetByPeer);
            };
            if (read.plaintext > 0) return recvDone(owner, read.plaintext);
            switch (read.progress) {
                .closed => recvDone(owner, 0), // close_notify: an orderly end.
                .want_read => {
                    if (records.peer_closed) return recvDone(owner, switch (hooks.truncation) {
                        .end => 0,
                        .reset => error.ConnectionResetByPeer,
                    });
                    hooks.loop(owner).recv(hooks.recv_completion(owner), hooks.socket(owner), records.room(), Owner, owner, recvCallback);
                },
                .want_write, .plaintext_full => recvDone(owner, error.ConnectionResetByPeer),
            }
        }

        /// Completes the receive after this batch, without a syscall.
        fn recvDone(owner: *Owner, result: sys.RecvError!usize) void {
            hooks.loop(owner).recvReady(hooks.recv_completion(owner), hooks.socket(owner), hooks.state(owner).plain_recv, result, Owner, owner, recvDeliverCallback);
        }

        fn recvDeliverCallback(owner: *Owner, result: sys.RecvError!usize) void {
            hooks.state(owner).recv_callback(owner, result);
        }

        /// Records arrived (or the socket ended): decrypt, unless the owner is going away.
        fn recvCallback(owner: *Owner, result: sys.RecvError!usize) void {
            const state = hooks.state(owner);
            const n = result catch |err| return state.recv_callback(owner, err);
            if (hooks.ending(owner)) return state.recv_callback(owner, error.Canceled);
            state.records.received(n);
            recvStep(owner);
        }

        // --- Send ------------------------------------------------------------------------

        /// The owner's send (counted by it): seal what fits one buffer of records, send them
        /// all, then report the plaintext taken.
        pub fn send(owner: *Owner, buffer: []const u8, comptime callback: SendCallback) void {
            const state = hooks.state(owner);
            const records = &state.records;
            assert(!records.outputPending() and state.send_taken == 0);
            state.plain_send = buffer;
            state.send_callback = callback;
            records.clearOutput();
            const engine = hooks.engine(owner);
            // The peer sent close_notify (or the engine failed): nothing more can be sealed.
            if (engine.state != .open) return sendRefused(owner);
            var w = records.wire();
            enter(owner);
            const result = engine.write(&w, buffer);
            leave(owner);
            records.settle(&w);
            const written = result catch return sendRefused(owner);
            // A buffer holds a whole record and its overhead, so a call seals something unless
            // the engine waits for the peer (renegotiation is off: it never does).
            if (!records.outputPending()) return sendRefused(owner);
            state.send_taken = written.plaintext;
            sendOutput(owner);
        }

        fn sendOutput(owner: *Owner) void {
            hooks.loop(owner).send(hooks.send_completion(owner), hooks.socket(owner), hooks.state(owner).records.unsent(), Owner, owner, sendCallback);
        }

        fn sendCallback(owner: *Owner, result: sys.SendError!usize) void {
            const state = hooks.state(owner);
            const n = result catch |err| {
                if (hooks.send_reset) |why| if (err == error.ConnectionResetByPeer or err == error.BrokenPipe) why(owner);
                return sendFailed(owner, err);
            };
            if (hooks.ending(owner)) return sendFailed(owner, error.Canceled);
            state.records.sent(n);
            if (state.records.outputPending()) return sendOutput(owner);
            const taken = state.send_taken;
            state.send_taken = 0;
            state.send_callback(owner, taken);
        }

        /// The engine cannot seal the send: it fails, after the batch, as a send to a closed
        /// peer.
        fn sendRefused(owner: *Owner) void {
            const state = hooks.state(owner);
            state.records.clearOutput();
            hooks.loop(owner).sendReady(hooks.send_completion(owner), hooks.socket(owner), state.plain_send, error.BrokenPipe, Owner, owner, sendDeliverCallback);
        }

        /// The send ends without its records on the wire: the owner will not send again.
        fn sendFailed(owner: *Owner, err: sys.SendError) void {
            const state = hooks.state(owner);
            state.send_taken = 0;
            state.records.clearOutput();
            state.send_callback(owner, err);
        }

        fn sendDeliverCallback(owner: *Owner, result: sys.SendError!usize) void {
            hooks.state(owner).send_callback(owner, result);
        }
    };
}
