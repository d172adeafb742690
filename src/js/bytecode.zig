//! The instruction set: one opcode byte, then fixed operands (little-endian). A stack
//! machine over a frame of local slots; the operand stack sits above the locals.
//!
//! Each opcode's operands and stack effect are data (`info`), read by the compiler (to track
//! stack depth), the verifier (to check every image before it runs) and the disassembler.
//! Jump targets are absolute code offsets. Exception handlers are pushed and popped by
//! `try_push`/`try_pop`; `finally` blocks are compiled inline on every path that leaves them,
//! so there is no "pending completion" state in the machine.
const std = @import("std");
const assert = std.debug.assert;

pub const Op = enum(u8) {
    // Constants.
    push_undefined,
    push_null,
    push_true,
    push_false,
    push_int8,
    push_number,
    push_string,
    push_global,
    push_callee,
    // Stack shuffles.
    pop,
    dup,
    dup2,
    swap,
    /// a b c -> c a b
    rot3,
    /// a b c -> b c a
    roll3,
    /// a b -> a b a
    over,
    // Locals, cells and upvalues. The `_check` forms throw a ReferenceError on an
    // uninitialised binding; the second operand is the name's string constant.
    get_loc,
    put_loc,
    get_loc_check,
    put_loc_check,
    set_uninitialized,
    get_cell,
    put_cell,
    get_cell_check,
    put_cell_check,
    init_cell,
    new_cell,
    copy_cell,
    box_local,
    get_upval,
    put_upval,
    get_upval_check,
    put_upval_check,
    throw_const_assign,
    throw_undeclared,
    closure,
    // Properties. Names are string constants.
    get_field,
    /// obj -> obj obj.name (a method call's receiver and callee)
    get_field2,
    /// obj v -> v
    put_field,
    get_elem,
    /// obj key -> obj obj[key]
    get_elem2,
    /// obj key v -> v
    put_elem,
    delete_field,
    delete_elem,
    /// obj v -> obj
    define_field,
    /// obj key v -> obj
    define_elem,
    /// obj src -> obj
    copy_properties,
    new_object,
    new_array,
    /// arr v -> arr
    append,
    append_hole,
    /// arr iterable -> arr
    append_spread,
    // Operators.
    add,
    sub,
    mul,
    div,
    mod,
    pow,
    bit_and,
    bit_or,
    bit_xor,
    shl,
    sar,
    shr,
    eq,
    ne,
    strict_eq,
    strict_ne,
    lt,
    le,
    gt,
    ge,
    instanceof,
    in,
    negate,
    plus,
    not,
    bit_not,
    typeof,
    increment,
    decrement,
    to_numeric,
    /// n values -> their ToString concatenation (template literals)
    concat,
    // Control.
    jump,
    jump_if_false,
    jump_if_true,
    /// Falsy: keep it and jump; truthy: pop it and go on (`&&`).
    jump_if_false_keep,
    /// Truthy: keep it and jump; falsy: pop it and go on (`||`).
    jump_if_true_keep,
    /// Not nullish: keep it and jump; nullish: pop it and go on (`??`).
    jump_if_not_nullish_keep,
    /// Not undefined: keep it and jump; undefined: pop it and go on (defaults).
    jump_if_defined_keep,
    /// Nullish top: drop it and `u8` more values, push undefined, jump (optional chains).
    jump_if_nullish_drop,
    // Calls.
    /// callee args... -> result
    call,
    /// receiver callee args... -> result
    call_method,
    /// callee args_array -> result
    call_spread,
    /// receiver callee args_array -> result
    call_method_spread,
    new,
    new_spread,
    @"return",
    return_undefined,
    // Generators.
    /// (a generator's first instruction after its parameters) -> the frame returns a new
    /// generator object holding the frame; its first next() resumes after this instruction.
    generator_start,
    /// value -> sent: the frame suspends into its generator, which next() answers with
    /// { value, done: false }; a later next(sent) resumes here with `sent` pushed.
    yield,
    /// value -> sent: an async generator's `yield` (its operand already awaited); suspends
    /// like `yield`, and the value answers the request at the head of its queue.
    yield_async,
    // Exceptions.
    throw,
    try_push,
    try_pop,
    /// exception -> exception: at a catch block's start, rethrows a generator's return
    /// signal (Value.generator_return), which only `finally` blocks may see.
    catch_guard,
    // Iteration. The state is two stack values: the iterable and a cursor.
    /// iterable -> state state
    iter_start,
    /// iterable -> state state, and pushes a handler (iter_start and try_push in one): the
    /// region of a for...of or an array pattern, whose handler closes the iterator.
    iter_start_protected,
    /// state state -> : the end of that region, its handler popped.
    iter_end,
    /// state state -> state state value, or jump when done
    iter_next,
    /// state state -> state state (value or undefined)
    iter_value,
    /// state state -> state state rest_array
    iter_rest,
    /// state state sent -> state state value: one step of `yield*`, the inner iterator's
    /// next(sent); when it is done, jump with its return value instead.
    iter_delegate,
    /// state state value exception -> state state value: `yield*` resumed by throw(e) or
    /// return(v) (the exception, or the return signal) hands it to the inner iterator's
    /// throw or return; a result not done is yielded again, a done one jumps with its
    /// value (throw) or returns it from the generator (return).
    iter_delegate_abrupt,
    /// iterator next value exception -> iterator next value kind result: an async
    /// generator's `yield*` resumed by throw(e) or return(v) calls the inner iterator's
    /// throw(e) or return(v) (kind: 0 or 1); with no such method, the return goes on, and a
    /// throw closes the iterator and is a TypeError.
    async_delegate_call,
    /// iterator next value kind result -> iterator next value: the awaited result of
    /// async_delegate_call, yielded again when not done; done, a throw's jumps with the
    /// result and a return's returns its value from the generator.
    async_delegate_result,
    /// state state -> state state: closes a protocol iterator that is not done (calls its
    /// `return()`), when a loop over it is left early (`break`, `return`).
    iter_close,
    /// iterable -> iterator next: `for await`'s GetIterator(async): [Symbol.asyncIterator](),
    /// or the sync iterator wrapped as by CreateAsyncFromSyncIterator.
    async_iter_start,
    /// result -> value, or pops it and jumps when it is done (TypeError when it is not an
    /// object): an awaited iterator result of `for await`.
    async_iter_done,
    /// iterator next -> iterator next result: calls the iterator's `return()`, or jumps
    /// (keeping the state) when it has none. `for await` left early awaits the result.
    async_iter_return,
    /// v -> : TypeError when v is not an object (an awaited `return()` result).
    iter_result_check,
    /// close_exception exception -> : the end of an iterator closed because its loop or
    /// pattern threw: throws the exception, unless it is a generator's return signal, when
    /// what the close threw goes on instead (IteratorClose: a throw completion wins over
    /// what `return()` threw or returned, a return completion does not).
    throw_after_close,
    /// object -> state state (its own enumerable keys)
    keys_start,
    /// src key1..keyN -> rest (object rest: src without the keys)
    object_rest,
    /// v -> v; TypeError when v is null or undefined (destructuring)
    require_object,
    /// v -> (stores the module export with this index)
    set_export,
    /// obj key f -> obj; as define_elem, and the anonymous function f takes the key as its
    /// name (`{ [k]: () => 1 }`)
    define_elem_named,
    /// -> the frame's `Special` value (scope.Special, below `special_count`: this,
    /// new.target, home, callee, or a new arguments object of the call)
    push_special,
    /// obj key v -> obj: defines a method (its home object set), getter, setter or field
    /// (`MemberFlags`)
    define_member,
    /// heritage? constructor -> constructor prototype (operand: 1 with a heritage)
    make_class,
    /// prototype constructor init -> prototype constructor (the instance fields' method)
    set_fields,
    /// constructor f -> constructor: runs the static fields' method on the class
    call_static,
    /// this constructor -> (runs the constructor's field initialiser on the new instance)
    init_fields,
    /// value this -> what a derived constructor returns
    derived_result,
    /// v -> ; ReferenceError unless v is the uninitialised marker (`super()` called twice)
    throw_if_initialized,
    /// constructor new_target args... -> this (`super(...)`)
    super_call,
    /// constructor new_target args_array -> this
    super_call_spread,
    /// this home key -> home's prototype's [key], read with `this` as the receiver
    super_get,
    /// -> a new private name (`#x`): a key no other class evaluation shares
    new_private_name,
    /// cooked_array raw_array -> cooked_array, with `raw` (read-only, hidden) and both frozen:
    /// a tagged template's strings object
    template_object,
    /// v -> ToPropertyKey(v), a string or a symbol (a computed field name, evaluated once)
    to_property_key,
};

/// How many values `push_special` knows (scope.Special's members).
pub const special_count = 5;

/// What define_member defines.
pub const MemberFlags = packed struct(u8) {
    kind: enum(u2) { method, getter, setter, field },
    /// Class members are not enumerable; an object literal's are.
    not_enumerable: bool,
    /// Defined on an instance by the class (fields, private methods): a private name may be
    /// defined only once per object.
    own: bool = false,
    _: u4 = 0,
};

pub const Operand = enum { none, u8, i8, u16, u32, u16_u16, u32_u8 };

pub const Info = struct {
    operand: Operand,
    /// Values popped; `null` when it depends on the operand (calls, concat).
    pops: ?u8,
    pushes: u8,
    /// Ends a basic block with no fall-through.
    terminator: bool = false,
    /// Has a jump target (the u32 operand).
    jumps: bool = false,
};

pub fn info(op: Op) Info {
    return switch (op) {
        .push_undefined, .push_null, .push_true, .push_false, .push_callee => .{ .operand = .none, .pops = 0, .pushes = 1 },
        .push_int8 => .{ .operand = .i8, .pops = 0, .pushes = 1 },
        .push_number, .push_string, .push_global => .{ .operand = .u16, .pops = 0, .pushes = 1 },
        .pop => .{ .operand = .none, .pops = 1, .pushes = 0 },
        .dup => .{ .operand = .none, .pops = 1, .pushes = 2 },
        .dup2 => .{ .operand = .none, .pops = 2, .pushes = 4 },
        .swap => .{ .operand = .none, .pops = 2, .pushes = 2 },
        .rot3, .roll3 => .{ .operand = .none, .pops = 3, .pushes = 3 },
        .over => .{ .operand = .none, .pops = 2, .pushes = 3 },
        .get_loc, .get_cell, .get_upval => .{ .operand = .u16, .pops = 0, .pushes = 1 },
        .get_loc_check, .get_cell_check, .get_upval_check => .{ .operand = .u16_u16, .pops = 0, .pushes = 1 },
        .put_loc, .put_cell, .put_upval, .init_cell => .{ .operand = .u16, .pops = 1, .pushes = 0 },
        .put_loc_check, .put_cell_check, .put_upval_check => .{ .operand = .u16_u16, .pops = 1, .pushes = 0 },
        .set_uninitialized, .new_cell, .copy_cell, .box_local => .{ .operand = .u16, .pops = 0, .pushes = 0 },
        .throw_const_assign, .throw_undeclared => .{ .operand = .u16, .pops = 0, .pushes = 0, .terminator = true },
        .closure => .{ .operand = .u16, .pops = 0, .pushes = 1 },
        .get_field => .{ .operand = .u16, .pops = 1, .pushes = 1 },
        .get_field2 => .{ .operand = .u16, .pops = 1, .pushes = 2 },
        .put_field => .{ .operand = .u16, .pops = 2, .pushes = 1 },
        .get_elem => .{ .operand = .none, .pops = 2, .pushes = 1 },
        .get_elem2 => .{ .operand = .none, .pops = 2, .pushes = 2 },
        .put_elem => .{ .operand = .none, .pops = 3, .pushes = 1 },
        .delete_field => .{ .operand = .u16, .pops = 1, .pushes = 1 },
        .delete_elem => .{ .operand = .none, .pops = 2, .pushes = 1 },
        .define_field => .{ .operand = .u16, .pops = 2, .pushes = 1 },
        .define_elem, .define_elem_named => .{ .operand = .none, .pops = 3, .pushes = 1 },
        .copy_properties => .{ .operand = .none, .pops = 2, .pushes = 1 },
        .new_object, .new_array => .{ .operand = .u16, .pops = 0, .pushes = 1 },
        .append => .{ .operand = .none, .pops = 2, .pushes = 1 },
        .append_spread => .{ .operand = .u8, .pops = 2, .pushes = 1 },
        .append_hole => .{ .operand = .none, .pops = 1, .pushes = 1 },
        .add, .sub, .mul, .div, .mod, .pow, .bit_and, .bit_or, .bit_xor, .shl, .sar, .shr => .{ .operand = .none, .pops = 2, .pushes = 1 },
        .eq, .ne, .strict_eq, .strict_ne, .lt, .le, .gt, .ge, .instanceof, .in => .{ .operand = .none, .pops = 2, .pushes = 1 },
        .negate, .plus, .not, .bit_not, .typeof, .increment, .decrement, .to_numeric => .{ .operand = .none, .pops = 1, .pushes = 1 },
        .concat => .{ .operand = .u8, .pops = null, .pushes = 1 },
        .jump => .{ .operand = .u32, .pops = 0, .pushes = 0, .terminator = true, .jumps = true },
        .jump_if_false, .jump_if_true => .{ .operand = .u32, .pops = 1, .pushes = 0, .jumps = true },
        // The fall-through pops the value; the jump keeps it (the verifier knows).
        .jump_if_false_keep, .jump_if_true_keep, .jump_if_not_nullish_keep, .jump_if_defined_keep => .{ .operand = .u32, .pops = 1, .pushes = 0, .jumps = true },
        // The fall-through keeps the value; the jump drops `u8` more and pushes undefined.
        .jump_if_nullish_drop => .{ .operand = .u32_u8, .pops = 0, .pushes = 0, .jumps = true },
        .call, .new => .{ .operand = .u8, .pops = null, .pushes = 1 },
        .call_method => .{ .operand = .u8, .pops = null, .pushes = 1 },
        .call_spread, .new_spread => .{ .operand = .none, .pops = 2, .pushes = 1 },
        .call_method_spread => .{ .operand = .none, .pops = 3, .pushes = 1 },
        .@"return", .throw => .{ .operand = .none, .pops = 1, .pushes = 0, .terminator = true },
        .return_undefined => .{ .operand = .none, .pops = 0, .pushes = 0, .terminator = true },
        .generator_start => .{ .operand = .none, .pops = 0, .pushes = 0 },
        .yield, .yield_async => .{ .operand = .none, .pops = 1, .pushes = 1 },
        // The handler starts with the stack as at try_push, plus the exception.
        .try_push => .{ .operand = .u32, .pops = 0, .pushes = 0, .jumps = true },
        .try_pop => .{ .operand = .none, .pops = 0, .pushes = 0 },
        .catch_guard => .{ .operand = .none, .pops = 1, .pushes = 1 },
        // iter_start's operand is the wording of "not iterable" (operations.IterationMode).
        .iter_start => .{ .operand = .u8, .pops = 1, .pushes = 2 },
        // The handler's target (it starts with the state and the exception), the wording.
        .iter_start_protected => .{ .operand = .u32_u8, .pops = 1, .pushes = 2, .jumps = true },
        .iter_end => .{ .operand = .none, .pops = 2, .pushes = 0 },
        .keys_start => .{ .operand = .none, .pops = 1, .pushes = 2 },
        // Done: jump with the state; otherwise the state and the value.
        .iter_next => .{ .operand = .u32, .pops = 2, .pushes = 3, .jumps = true },
        .iter_value, .iter_rest => .{ .operand = .none, .pops = 2, .pushes = 3 },
        .iter_close => .{ .operand = .none, .pops = 2, .pushes = 2 },
        .iter_delegate => .{ .operand = .u32, .pops = 3, .pushes = 3, .jumps = true },
        .iter_delegate_abrupt => .{ .operand = .u32, .pops = 4, .pushes = 3, .jumps = true },
        .async_delegate_call => .{ .operand = .none, .pops = 1, .pushes = 2 },
        .async_delegate_result => .{ .operand = .u32, .pops = 3, .pushes = 1, .jumps = true },
        .async_iter_start => .{ .operand = .u8, .pops = 1, .pushes = 2 },
        // Not done: the value; done: jump with the result popped.
        .async_iter_done => .{ .operand = .u32, .pops = 1, .pushes = 1, .jumps = true },
        // A return method: the state and its result; none: jump with the state.
        .async_iter_return => .{ .operand = .u32, .pops = 2, .pushes = 3, .jumps = true },
        .iter_result_check => .{ .operand = .none, .pops = 1, .pushes = 0 },
        .throw_after_close => .{ .operand = .none, .pops = 2, .pushes = 0, .terminator = true },
        .object_rest => .{ .operand = .u8, .pops = null, .pushes = 1 },
        // The first key (or no_name) and the wording (operations.RequireWording).
        .require_object => .{ .operand = .u16_u16, .pops = 1, .pushes = 1 },
        .set_export => .{ .operand = .u16, .pops = 1, .pushes = 0 },
        .push_special => .{ .operand = .u8, .pops = 0, .pushes = 1 },
        .define_member => .{ .operand = .u8, .pops = 3, .pushes = 1 },
        .make_class => .{ .operand = .u8, .pops = null, .pushes = 2 },
        .set_fields => .{ .operand = .none, .pops = 3, .pushes = 2 },
        .call_static => .{ .operand = .none, .pops = 2, .pushes = 1 },
        .init_fields => .{ .operand = .none, .pops = 2, .pushes = 0 },
        .derived_result => .{ .operand = .none, .pops = 2, .pushes = 1 },
        .throw_if_initialized => .{ .operand = .none, .pops = 1, .pushes = 0 },
        .super_call => .{ .operand = .u8, .pops = null, .pushes = 1 },
        .super_call_spread => .{ .operand = .none, .pops = 3, .pushes = 1 },
        .super_get => .{ .operand = .none, .pops = 3, .pushes = 1 },
        .new_private_name => .{ .operand = .u16, .pops = 0, .pushes = 1 },
        .template_object => .{ .operand = .none, .pops = 2, .pushes = 1 },
        .to_property_key => .{ .operand = .none, .pops = 1, .pushes = 1 },
    };
}

/// How iter_start and append_spread word a value they cannot iterate, as V8 words it at
/// that site (S is the site's source text, from the function's site names).
pub const IterationMode = enum(u8) {
    /// No source text: the value's type and value, "number 5 is not iterable (cannot read
    /// property Symbol(Symbol.iterator))".
    value,
    /// "S is not iterable".
    plain,
    /// "S is not iterable (cannot read property Symbol(Symbol.iterator))".
    noted,
    /// "S is not a function or its return value is not iterable".
    call,
    /// The last spread argument of a call: "S is not iterable (cannot read property null)"
    /// for null or undefined, "Spread syntax requires ...iterable[Symbol.iterator] to be a
    /// function" otherwise.
    spread_argument,
    /// An array pattern that is a property's value in an object pattern: "Cannot
    /// destructure property 'Symbol(Symbol.iterator)' of 'S' as it is null." for null or
    /// undefined, as `noted` otherwise (S, or the value's type without a site text).
    property_value,
};

/// How require_object words null or undefined.
pub const RequireWording = enum(u16) {
    /// "Cannot destructure property 'K' of 'S' as it is null." ("Cannot destructure 'S'
    /// as it is null." without a key; S the site's text, or the value's type without one).
    destructure,
    /// "Cannot read properties of null".
    read,
};

pub fn operandBytes(operand: Operand) u32 {
    return switch (operand) {
        .none => 0,
        .u8, .i8 => 1,
        .u16 => 2,
        .u32 => 4,
        .u16_u16 => 4,
        .u32_u8 => 5,
    };
}

pub fn size(op: Op) u32 {
    return 1 + operandBytes(info(op).operand);
}

/// Values popped by an instruction whose count depends on its operand.
pub fn dynamicPops(op: Op, operand: u32) u32 {
    return switch (op) {
        .concat => operand,
        .call, .new => operand + 1,
        .call_method => operand + 2,
        .object_rest => operand + 1,
        .make_class => operand + 1,
        .super_call => operand + 2,
        else => unreachable,
    };
}

pub inline fn readU16(code: []const u8, at: usize) u16 {
    return std.mem.readInt(u16, code[at..][0..2], .little);
}

pub inline fn readU32(code: []const u8, at: usize) u32 {
    return std.mem.readInt(u32, code[at..][0..4], .little);
}

/// How a closure gets each of its captured cells when it is created.
pub const Capture = packed struct(u16) {
    /// From the creating frame's local slot (true) or from the creating closure's own
    /// captures (false).
    from_local: bool,
    index: u15,
};

comptime {
    assert(@typeInfo(Op).@"enum".field_names.len < 256);
}

test "bytecode: every opcode has an info" {
    inline for (comptime std.enums.values(Op)) |op| {
        const i = info(op);
        if (i.pops == null) _ = dynamicPops(op, 1);
        try std.testing.expect(size(op) >= 1);
    }
}
