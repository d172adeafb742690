//! Scope analysis: which binding each identifier names, which bindings outlive their frame
//! (captured by an inner function, so they live in a cell), which references may see a
//! `let`/`const` before its declaration ran (and so need a check), and the free variables of
//! each function (its upvalues). The results are written into the tree for the compiler.
//!
//! The one decision a reader must know: a reference needs a temporal-dead-zone check only if
//! it is in another function than its binding, comes textually before the end of the
//! binding's declarator, or names a binding of a `switch` block (where a case can jump over a
//! declaration). Everything else is provably initialised, and compiles to a plain slot read.
const std = @import("std");
const assert = std.debug.assert;

const ast = @import("ast.zig");
const Node = ast.Node;

pub const BindingKind = enum {
    let,
    @"const",
    /// Function-scoped: declared in its function's scope wherever its statement is, and
    /// undefined from the function's entry (no dead zone).
    @"var",
    function,
    parameter,
    catch_parameter,
    /// The name of a named function expression, inside itself (read-only).
    self_function,
    /// What a function gets from its call rather than from its arguments (`this`,
    /// `new.target`, a method's home object, the function itself): see `Special`.
    special,
    /// `this` in a derived class's constructor: uninitialised until `super()` returns.
    derived_this,
    /// The strings object of a tagged template's site, made by the top level on entry.
    template,
};

/// The values a (non-arrow) function's frame provides, each bound on entry to a hidden
/// binding of the function's scope when the function or an arrow inside it uses it.
pub const Special = enum(u8) {
    this,
    new_target,
    /// The object whose prototype `super.x` reads: a method's home object.
    home,
    /// The running function (a derived constructor's, for `super()`).
    callee,
    /// The call's arguments object (ES 10.4.4.6, the strict-mode unmapped one), made at the
    /// frame's entry while the call's extra arguments are still above the parameters.
    arguments,

    pub fn bindingName(s: Special) []const u8 {
        return switch (s) {
            .this => "this",
            .new_target => "new.target",
            .home => "%home",
            .callee => "%callee",
            .arguments => "arguments",
        };
    }
};

pub const special_count = std.enums.values(Special).len;

pub const Binding = struct {
    name: []const u8,
    kind: BindingKind,
    pos: u32,
    /// The end of the declarator that initialises it.
    init_end: u32,
    function: *FunctionInfo,
    in_switch: bool,
    /// Some inner function refers to it: it lives in a cell.
    captured: bool = false,
    /// Some reference may see it before initialisation.
    needs_tdz: bool = false,
    /// A parameter whose own initialisation has not been reached yet while the resolver
    /// walks the parameter list: references then (from earlier defaults) are checked.
    param_pending: bool = false,
    /// The frame slot the compiler gave it (holding the cell when captured).
    slot: u16 = 0,
    /// Set once the compiler has allocated the slot in the current function's frame.
    slot_valid: bool = false,

    pub fn isConst(b: *const Binding) bool {
        return switch (b.kind) {
            .@"const", .self_function, .special, .derived_this, .template => true,
            .let, .@"var", .function, .parameter, .catch_parameter => false,
        };
    }
};

pub const ScopeKind = enum { function, block, switch_block, catch_clause, function_name };

pub const Scope = struct {
    kind: ScopeKind,
    parent: ?*Scope,
    function: *FunctionInfo,
    bindings: std.ArrayList(*Binding) = .empty,
    /// Function declarations directly in this scope, created on entry (hoisted).
    functions: std.ArrayList(*ast.Function) = .empty,
    /// A catch clause whose parameter is one name, which a `var` in its block may redeclare
    /// (Annex B.3.4: the var's initialiser then assigns the parameter).
    simple_catch: bool = false,

    pub fn find(s: *const Scope, name: []const u8) ?*Binding {
        for (s.bindings.items) |b| {
            if (std.mem.eql(u8, b.name, name)) return b;
        }
        return null;
    }
};

pub const FunctionInfo = struct {
    node: *ast.Function,
    parent: ?*FunctionInfo,
    /// Index in the program's function table (0 is the top-level code).
    index: u32,
    /// Bindings of enclosing functions used here or in a nested function, in first-use order.
    upvalues: std.ArrayList(*Binding) = .empty,
    /// The scope of the parameters and the body's top-level declarations.
    scope: *Scope = undefined,
    /// The scope holding a named function expression's own name, if any.
    name_scope: ?*Scope = null,
    /// The hidden bindings of `Special` values this function's code (or its arrows') uses.
    specials: [special_count]?*Binding = @splat(null),

    pub fn upvalueIndex(info: *const FunctionInfo, b: *const Binding) ?u16 {
        for (info.upvalues.items, 0..) |u, i| {
            if (u == b) return @intCast(i);
        }
        return null;
    }
};

/// What an identifier names.
pub const Resolution = union(enum) {
    unresolved,
    binding: struct { binding: *Binding, check: bool },
    /// A global of the engine (builtins.zig) or of the host, by id.
    global: u16,
    /// `undefined`, `NaN`, `Infinity`.
    constant: f64,
    undefined_constant,
    /// Not declared anywhere: a ReferenceError when the code runs.
    undeclared,
};

pub const Error = error{ SyntaxError, OutOfMemory };

/// The resolver's state for one program.
pub const Resolver = struct {
    arena: std.mem.Allocator,
    functions: std.ArrayList(*FunctionInfo) = .empty,
    current: ?*Scope = null,
    /// Looks a builtin global name up: its id, or null if it is not one.
    globals: *const fn (name: []const u8) ?u16,
    /// Globals the host adds; their ids follow the builtins' (`host_global_base + i`).
    host_globals: []const []const u8 = &.{},
    host_global_base: u16 = 0,
    failure: ?struct { pos: u32, message: []const u8 } = null,
    /// Every tagged template's site, in source order: the top level makes their objects.
    templates: std.ArrayList(*ast.TemplateObject) = .empty,
    /// The lowest native stack address the walk may reach (see Compiler.Options).
    stack_floor: usize = 0,

    fn fail(r: *Resolver, pos: u32, comptime fmt: []const u8, args: anytype) Error {
        r.failure = .{ .pos = pos, .message = try std.fmt.allocPrint(r.arena, fmt, args) };
        return error.SyntaxError;
    }

    pub fn resolveProgram(r: *Resolver, program: *ast.Program) Error!void {
        const info = try r.newFunction(program.function, null);
        const s = try r.newScope(.function, null, info);
        info.scope = s;
        r.current = s;
        try r.hoistVars(s, program.body);
        try r.hoist(s, program.body);
        for (program.body) |statement| try r.resolveStatement(statement);
        r.current = null;
    }

    fn newFunction(r: *Resolver, node: *ast.Function, parent: ?*FunctionInfo) Error!*FunctionInfo {
        const info = try r.arena.create(FunctionInfo);
        info.* = .{ .node = node, .parent = parent, .index = @intCast(r.functions.items.len) };
        try r.functions.append(r.arena, info);
        node.info = info;
        return info;
    }

    fn newScope(r: *Resolver, kind: ScopeKind, parent: ?*Scope, info: *FunctionInfo) Error!*Scope {
        const s = try r.arena.create(Scope);
        s.* = .{ .kind = kind, .parent = parent, .function = info };
        return s;
    }

    fn declare(r: *Resolver, s: *Scope, name: []const u8, kind: BindingKind, pos: u32, init_end: u32) Error!*Binding {
        if (s.find(name)) |existing| {
            if (s.kind == .function and redeclarable(existing.kind, kind)) return existing;
            // V8 points at whichever declaration comes second in the source.
            return r.fail(@max(pos, existing.pos), "Identifier '{s}' has already been declared", .{name});
        }
        const b = try r.arena.create(Binding);
        b.* = .{
            .name = name,
            .kind = kind,
            .pos = pos,
            .init_end = init_end,
            .function = s.function,
            .in_switch = s.kind == .switch_block,
        };
        try s.bindings.append(r.arena, b);
        return b;
    }

    /// Declares the `var` declarations anywhere in a function's body (not inside nested
    /// functions) in the function's scope, before its lexical declarations: a name both
    /// declares is the SyntaxError it is in JavaScript.
    fn hoistVars(r: *Resolver, s: *Scope, body: []const *Node) Error!void {
        assert(s.kind == .function);
        for (body) |statement| try r.hoistVarsIn(s, statement);
    }

    fn hoistVarsIn(r: *Resolver, s: *Scope, node: *Node) Error!void {
        if (@frameAddress() < r.stack_floor) return r.fail(node.pos, "the program is nested too deeply", .{});
        switch (node.data) {
            .declaration => |d| if (d.kind == .@"var") {
                for (d.declarators) |declarator| try r.declarePattern(s, declarator.target, .@"var", declarator.target.pos);
            },
            .block => |b| try r.hoistVars(s, b.body),
            .if_statement => |i| {
                try r.hoistVarsIn(s, i.then);
                if (i.otherwise) |o| try r.hoistVarsIn(s, o);
            },
            .for_statement => |f| {
                if (f.init) |init| try r.hoistVarsIn(s, init);
                try r.hoistVarsIn(s, f.body);
            },
            .for_in, .for_of => |f| {
                if (f.kind == @as(?ast.DeclarationKind, .@"var")) try r.declarePattern(s, f.target, .@"var", f.target.pos);
                try r.hoistVarsIn(s, f.body);
            },
            .while_statement, .do_while => |w| try r.hoistVarsIn(s, w.body),
            .labeled => |l| try r.hoistVarsIn(s, l.body),
            .try_statement => |t| {
                try r.hoistVarsIn(s, t.block);
                if (t.handler) |h| try r.hoistVarsIn(s, h);
                if (t.finalizer) |f| try r.hoistVarsIn(s, f);
            },
            .switch_statement => |sw| for (sw.cases) |case| try r.hoistVars(s, case.body),
            else => {},
        }
    }

    /// A `var` may not redeclare a lexical binding of a block it is in (checked as the
    /// resolver reaches it, when those blocks' declarations are known); a catch clause's
    /// one-name parameter is the exception (V8 allows it in a `for (var e of ...)` head too).
    fn checkVarTarget(r: *Resolver, target: *const Node) Error!void {
        switch (target.data) {
            .identifier => |id| {
                var s = r.current.?;
                while (s.kind != .function) : (s = s.parent.?) {
                    const b = s.find(id.name) orelse continue;
                    if (b.kind == .catch_parameter and s.simple_catch) continue;
                    return r.fail(target.pos, "Identifier '{s}' has already been declared", .{id.name});
                }
            },
            .with_default => |d| try r.checkVarTarget(d.target),
            .array_pattern => |p| {
                for (p.elements) |element| {
                    if (element) |e| try r.checkVarTarget(e);
                }
                if (p.rest) |rest| try r.checkVarTarget(rest);
            },
            .object_pattern => |p| {
                for (p.properties) |property| try r.checkVarTarget(property.value);
                if (p.rest) |rest| try r.checkVarTarget(rest);
            },
            else => unreachable, // The parser only builds these as declaration targets.
        }
    }

    /// Declares the let, const and function declarations directly in a statement list.
    fn hoist(r: *Resolver, s: *Scope, body: []const *Node) Error!void {
        for (body) |statement| {
            switch (statement.data) {
                .declaration => |d| {
                    if (d.kind == .@"var") continue; // Declared by hoistVars.
                    const kind: BindingKind = if (d.kind == .let) .let else .@"const";
                    for (d.declarators) |declarator| {
                        const end = if (declarator.init) |init| nodeEnd(init) else declarator.target.pos + 1;
                        try r.declarePattern(s, declarator.target, kind, end);
                    }
                },
                .function_declaration => |f| {
                    _ = try r.declare(s, f.name.?, .function, f.pos, f.pos);
                    try s.functions.append(r.arena, f);
                },
                .class_declaration => |c| _ = try r.declare(s, c.name.?, .let, c.pos, c.constructor.end),
                else => {},
            }
        }
    }

    fn declarePattern(r: *Resolver, s: *Scope, target: *Node, kind: BindingKind, init_end: u32) Error!void {
        switch (target.data) {
            .identifier => |id| _ = try r.declare(s, id.name, kind, target.pos, init_end),
            .with_default => |d| try r.declarePattern(s, d.target, kind, init_end),
            .array_pattern => |p| {
                for (p.elements) |element| {
                    if (element) |e| try r.declarePattern(s, e, kind, init_end);
                }
                if (p.rest) |rest| try r.declarePattern(s, rest, kind, init_end);
            },
            .object_pattern => |p| {
                for (p.properties) |property| try r.declarePattern(s, property.value, kind, init_end);
                if (p.rest) |rest| try r.declarePattern(s, rest, kind, init_end);
            },
            else => unreachable, // The parser only builds these as declaration targets.
        }
    }

    fn enterBlock(r: *Resolver, kind: ScopeKind) Error!*Scope {
        const parent = r.current.?;
        const s = try r.newScope(kind, parent, parent.function);
        r.current = s;
        return s;
    }

    fn leave(r: *Resolver, s: *Scope) void {
        assert(r.current == s);
        r.current = s.parent;
    }

    fn resolveStatements(r: *Resolver, body: []const *Node) Error!void {
        for (body) |statement| try r.resolveStatement(statement);
    }

    fn resolveStatement(r: *Resolver, node: *Node) Error!void {
        if (@frameAddress() < r.stack_floor) return r.fail(node.pos, "the program is nested too deeply", .{});
        switch (node.data) {
            .declaration => |d| {
                for (d.declarators) |declarator| {
                    if (declarator.init) |init| try r.resolveExpression(init);
                    if (d.kind == .@"var") try r.checkVarTarget(declarator.target);
                    try r.bindPattern(declarator.target);
                }
            },
            .function_declaration => |f| try r.resolveFunction(f),
            .class_declaration => |c| {
                try r.resolveClass(c);
                const id = try r.arena.create(ast.Identifier);
                id.* = .{ .name = c.name.? };
                try r.referenceAs(c.pos, id, true);
                c.outer_binding = id.resolution.binding.binding;
            },
            .field_definition => |d| {
                try r.useSpecial(node.pos, .this);
                try r.resolveExpression(d.key);
                if (d.value) |v| try r.resolveExpression(v);
            },
            .expression_statement => |e| try r.resolveExpression(e),
            .block => |*b| {
                const s = try r.enterBlock(.block);
                b.scope = s;
                try r.hoist(s, b.body);
                try r.resolveStatements(b.body);
                r.leave(s);
            },
            .if_statement => |i| {
                try r.resolveExpression(i.condition);
                try r.resolveStatement(i.then);
                if (i.otherwise) |o| try r.resolveStatement(o);
            },
            .for_statement => |*f| {
                const s = try r.enterBlock(.block);
                f.scope = s;
                if (f.init) |init| {
                    if (init.data == .declaration) try r.hoist(s, &.{init});
                    try r.resolveStatement(init);
                }
                if (f.condition) |c| try r.resolveExpression(c);
                if (f.update) |u| try r.resolveExpression(u);
                try r.resolveStatement(f.body);
                r.leave(s);
            },
            .for_in, .for_of => |*f| {
                const s = try r.enterBlock(.block);
                f.scope = s;
                if (f.kind) |kind| switch (kind) {
                    .let => try r.declarePattern(s, f.target, .let, nodeEnd(f.iterable)),
                    .@"const" => try r.declarePattern(s, f.target, .@"const", nodeEnd(f.iterable)),
                    .@"var" => try r.checkVarTarget(f.target),
                };
                try r.resolveExpression(f.iterable);
                if (f.kind != null) try r.bindPattern(f.target) else try r.resolvePattern(f.target);
                try r.resolveStatement(f.body);
                r.leave(s);
            },
            .while_statement, .do_while => |w| {
                try r.resolveExpression(w.condition);
                try r.resolveStatement(w.body);
            },
            .break_statement, .continue_statement, .empty_statement => {},
            .labeled => |l| try r.resolveStatement(l.body),
            .return_statement => |value| if (value) |v| try r.resolveExpression(v),
            .throw_statement => |value| try r.resolveExpression(value),
            .try_statement => |*t| {
                try r.resolveStatement(t.block);
                if (t.handler) |handler| {
                    const s = try r.enterBlock(.catch_clause);
                    t.catch_scope = s;
                    if (t.parameter) |p| {
                        s.simple_catch = p.data == .identifier;
                        try r.declarePattern(s, p, .catch_parameter, p.pos);
                        try r.bindPattern(p);
                    }
                    // The catch block shares the clause's scope, so that redeclaring the
                    // parameter is the error it is in the language.
                    const body = handler.data.block.body;
                    try r.hoist(s, body);
                    try r.resolveStatements(body);
                    r.leave(s);
                }
                if (t.finalizer) |f| try r.resolveStatement(f);
            },
            .switch_statement => |*sw| {
                try r.resolveExpression(sw.discriminant);
                const s = try r.enterBlock(.switch_block);
                sw.scope = s;
                for (sw.cases) |case| try r.hoist(s, case.body);
                for (sw.cases) |case| {
                    if (case.test_value) |t| try r.resolveExpression(t);
                    try r.resolveStatements(case.body);
                }
                r.leave(s);
            },
            else => try r.resolveExpression(node),
        }
    }

    /// A declaration's target: its identifiers name the bindings being initialised (no
    /// check), the expressions inside (defaults, computed keys) are ordinary.
    fn bindPattern(r: *Resolver, node: *Node) Error!void {
        switch (node.data) {
            .identifier => |id| try r.referenceAs(node.pos, id, true),
            .with_default => |d| {
                try r.resolveExpression(d.value);
                try r.bindPattern(d.target);
            },
            .array_pattern => |p| {
                for (p.elements) |element| {
                    if (element) |e| try r.bindPattern(e);
                }
                if (p.rest) |rest| try r.bindPattern(rest);
            },
            .object_pattern => |p| {
                for (p.properties) |property| {
                    if (property.key == .computed) try r.resolveExpression(property.key.computed);
                    try r.bindPattern(property.value);
                }
                if (p.rest) |rest| try r.bindPattern(rest);
            },
            else => unreachable, // The parser only builds these as declaration targets.
        }
    }

    /// The expressions inside a pattern (defaults and computed keys); its identifiers are
    /// references (to the declared bindings, or assignment targets).
    fn resolvePattern(r: *Resolver, node: *Node) Error!void {
        switch (node.data) {
            .identifier => try r.resolveExpression(node),
            .with_default => |d| {
                try r.resolvePattern(d.target);
                try r.resolveExpression(d.value);
            },
            .array_pattern => |p| {
                for (p.elements) |element| {
                    if (element) |e| try r.resolvePattern(e);
                }
                if (p.rest) |rest| try r.resolvePattern(rest);
            },
            .object_pattern => |p| {
                for (p.properties) |property| {
                    if (property.key == .computed) try r.resolveExpression(property.key.computed);
                    try r.resolvePattern(property.value);
                }
                if (p.rest) |rest| try r.resolvePattern(rest);
            },
            else => try r.resolveExpression(node),
        }
    }

    fn resolveExpression(r: *Resolver, node: *Node) Error!void {
        if (@frameAddress() < r.stack_floor) return r.fail(node.pos, "the program is nested too deeply", .{});
        switch (node.data) {
            .number, .string, .true_literal, .false_literal, .null_literal, .hole, .regexp => {},
            .identifier => |id| try r.reference(node.pos, id),
            .template => |t| for (t.expressions) |e| try r.resolveExpression(e),
            .template_object => |site| try r.templateSite(node.pos, site),
            .array => |elements| for (elements) |e| try r.resolveExpression(e),
            .object => |properties| for (properties) |p| {
                if (p.key == .computed) try r.resolveExpression(p.key.computed);
                try r.resolveExpression(p.value);
                if (p.shorthand_default) |d| try r.resolveExpression(d);
            },
            .function => |f| try r.resolveFunction(f),
            .unary => |u| try r.resolveExpression(u.operand),
            .update => |u| try r.resolveExpression(u.target),
            .binary, .logical => |b| {
                try r.resolveExpression(b.lhs);
                try r.resolveExpression(b.rhs);
            },
            .conditional => |c| {
                try r.resolveExpression(c.condition);
                try r.resolveExpression(c.then);
                try r.resolveExpression(c.otherwise);
            },
            .assign => |a| {
                try r.resolvePattern(a.target);
                try r.resolveExpression(a.value);
            },
            .sequence => |items| for (items) |e| try r.resolveExpression(e),
            .member => |m| try r.resolveExpression(m.object),
            .index => |i| {
                try r.resolveExpression(i.object);
                try r.resolveExpression(i.key);
            },
            .call, .new => |c| {
                try r.resolveExpression(c.callee);
                for (c.arguments) |a| try r.resolveExpression(a);
            },
            .chain, .spread => |inner| try r.resolveExpression(inner),
            .array_pattern, .object_pattern, .with_default => try r.resolvePattern(node),
            .class => |c| try r.resolveClass(c),
            .super_call => |call| {
                const info = r.thisFunction();
                if (info.node.kind != .derived_constructor) return r.fail(node.pos, "'super' keyword unexpected here", .{});
                try r.useSpecial(node.pos, .callee);
                try r.useSpecial(node.pos, .new_target);
                try r.useSpecial(node.pos, .this);
                for (call.arguments) |a| try r.resolveExpression(a);
            },
            .yield_expression => |y| if (y.argument) |a| try r.resolveExpression(a),
            .super_member => |key| {
                const info = r.thisFunction();
                if (info.node.kind == .normal or info.node.kind == .generator or info.node.kind == .async_function or info.node.kind == .async_generator or info.node.kind == .top_level) return r.fail(node.pos, "'super' keyword unexpected here", .{});
                try r.useSpecial(node.pos, .home);
                try r.useSpecial(node.pos, .this);
                try r.resolveExpression(key);
            },
            else => unreachable, // Statements never appear as expressions.
        }
    }

    /// A tagged template's site: a hidden binding of the top level holds its strings object,
    /// so that every evaluation of the site, in every call and request, sees the same one.
    fn templateSite(r: *Resolver, pos: u32, site: *ast.TemplateObject) Error!void {
        const top = r.functions.items[0].scope;
        const name = try std.fmt.allocPrint(r.arena, "%template{d}", .{r.templates.items.len});
        site.binding = try r.declare(top, name, .template, pos, pos);
        try r.templates.append(r.arena, site);
        const id = try r.arena.create(ast.Identifier);
        id.* = .{ .name = name };
        try r.reference(pos, id);
    }

    /// The function whose `this` code here sees: the innermost that is not an arrow.
    fn thisFunction(r: *Resolver) *FunctionInfo {
        var info = r.current.?.function;
        while (info.node.is_arrow) info = info.parent.?;
        return info;
    }

    /// Makes the hidden binding of a special value exist in the function that provides it,
    /// and refers to it from here (an arrow captures it like any other binding).
    fn useSpecial(r: *Resolver, pos: u32, which: Special) Error!void {
        const id = try r.arena.create(ast.Identifier);
        id.* = .{ .name = which.bindingName() };
        try r.reference(pos, id);
    }

    /// `arguments` names the enclosing function's arguments object, except where the
    /// language has none: a class's field initialisers and static blocks (an early
    /// SyntaxError, ES 15.7.1) and the top level (a module has none; node's CommonJS wrapper
    /// has its own, which sluice does not imitate).
    fn checkArgumentsAllowed(r: *Resolver, pos: u32, info: *const FunctionInfo) Error!void {
        if (info.node.is_class_initializer) {
            return r.fail(pos, "'arguments' is not allowed in class field initializer or static initialization block", .{});
        }
        if (info.node.kind == .top_level) return r.fail(pos, "arguments at the top level is not supported", .{});
    }

    /// The hidden binding of a special value in `info`, declared on first use.
    fn specialBinding(r: *Resolver, info: *FunctionInfo, which: Special) Error!*Binding {
        const i = @backingInt(which);
        if (info.specials[i]) |b| return b;
        const derived_this = which == .this and info.node.kind == .derived_constructor;
        const b = try r.declare(info.scope, which.bindingName(), if (derived_this) .derived_this else .special, info.node.pos, 0);
        info.specials[i] = b;
        return b;
    }

    /// A class: its heritage and computed keys in a scope where its own name is in its dead
    /// zone, then its constructor, methods and field initialisers as functions.
    fn resolveClass(r: *Resolver, c: *ast.Class) Error!void {
        const outer = r.current.?;
        if (c.name != null or c.private_names.len > 0 or c.computed_field_keys.len > 0) {
            const name_scope = try r.enterBlock(.block);
            c.name_scope = name_scope;
            if (c.name) |name| c.self_binding = try r.declare(name_scope, name, .@"const", c.pos, c.constructor.end);
            // Each private name is a hidden binding holding its key, made when the class is.
            for (c.private_names) |n| _ = try r.declare(name_scope, n, .@"const", c.pos, c.pos);
            // So is each computed field name, evaluated when the class is.
            for (c.computed_field_keys) |k| _ = try r.declare(name_scope, k.name, .@"const", c.pos, c.pos);
        }
        if (c.heritage) |h| try r.resolveExpression(h);
        for (c.computed_field_keys) |k| try r.resolveExpression(k.expression);
        try r.resolveFunction(c.constructor);
        for (c.members) |m| {
            if (m.key == .computed) try r.resolveExpression(m.key.computed);
            try r.resolveFunction(m.function);
        }
        if (c.fields) |f| try r.resolveFunction(f);
        if (c.statics) |f| try r.resolveFunction(f);
        r.current = outer;
    }

    fn resolveFunction(r: *Resolver, f: *ast.Function) Error!void {
        const outer = r.current.?;
        const info = try r.newFunction(f, outer.function);
        var parent_scope = outer;
        if (!f.is_declaration and !f.is_arrow and (f.kind == .normal or f.kind == .generator or f.kind == .async_function or f.kind == .async_generator) and f.name != null) {
            const name_scope = try r.newScope(.function_name, outer, info);
            info.name_scope = name_scope;
            f.self_binding = try r.declare(name_scope, f.name.?, .self_function, f.pos, f.pos);
            parent_scope = name_scope;
        }
        const s = try r.newScope(.function, parent_scope, info);
        info.scope = s;
        r.current = s;
        for (f.parameters) |p| try r.declareParameter(s, p.target);
        if (f.rest) |rest| try r.declareParameter(s, rest);
        // Parameters are initialised left to right; until then they are in their dead zone.
        for (s.bindings.items) |b| b.param_pending = true;
        for (f.parameters) |p| {
            if (p.default) |d| try r.resolveExpression(d);
            try r.bindPattern(p.target);
            settleParameter(s, p.target);
        }
        if (f.rest) |rest| try r.bindPattern(rest);
        for (s.bindings.items) |b| b.param_pending = false;
        // After the parameters' defaults: those cannot see the body's vars.
        try r.hoistVars(s, f.body);
        try r.hoist(s, f.body);
        try r.resolveStatements(f.body);
        r.current = outer;
    }

    /// Marks the bindings of one parameter initialised.
    fn settleParameter(s: *Scope, target: *const Node) void {
        switch (target.data) {
            .identifier => |id| if (s.find(id.name)) |b| {
                b.param_pending = false;
            },
            .with_default => |d| settleParameter(s, d.target),
            .array_pattern => |p| {
                for (p.elements) |element| {
                    if (element) |e| settleParameter(s, e);
                }
                if (p.rest) |rest| settleParameter(s, rest);
            },
            .object_pattern => |p| {
                for (p.properties) |property| settleParameter(s, property.value);
                if (p.rest) |rest| settleParameter(s, rest);
            },
            else => {},
        }
    }

    fn declareParameter(r: *Resolver, s: *Scope, target: *Node) Error!void {
        switch (target.data) {
            .identifier => |id| {
                if (s.find(id.name) != null) {
                    return r.fail(target.pos, "Duplicate parameter name not allowed in this context", .{});
                }
                _ = try r.declare(s, id.name, .parameter, target.pos, target.pos);
            },
            .with_default => |d| try r.declareParameter(s, d.target),
            .array_pattern => |p| {
                for (p.elements) |element| {
                    if (element) |e| try r.declareParameter(s, e);
                }
                if (p.rest) |rest| try r.declareParameter(s, rest);
            },
            .object_pattern => |p| {
                for (p.properties) |property| try r.declareParameter(s, property.value);
                if (p.rest) |rest| try r.declareParameter(s, rest);
            },
            else => unreachable, // The parser checked parameter targets.
        }
    }

    fn hostGlobal(r: *const Resolver, name: []const u8) ?u16 {
        for (r.host_globals, 0..) |h, i| {
            if (std.mem.eql(u8, h, name)) return @intCast(r.host_global_base + i);
        }
        return null;
    }

    fn reference(r: *Resolver, pos: u32, id: *ast.Identifier) Error!void {
        return r.referenceAs(pos, id, false);
    }

    fn referenceAs(r: *Resolver, pos: u32, id: *ast.Identifier, declaring: bool) Error!void {
        if (!declaring) {
            if (specialNamed(id.name)) |which| {
                const info = r.thisFunction();
                if (which == .arguments) try r.checkArgumentsAllowed(pos, info);
                if (info.node.kind == .top_level) {
                    // A module's top-level `this` is undefined; `new.target` has no meaning there.
                    if (which != .this) return r.fail(pos, "new.target expression is not allowed here", .{});
                    id.resolution = .undefined_constant;
                    return;
                }
                _ = try r.specialBinding(info, which);
            }
        }
        const here = r.current.?.function;
        var s: ?*Scope = r.current;
        while (s) |scope_| : (s = scope_.parent) {
            const b = scope_.find(id.name) orelse continue;
            const other_function = b.function != here;
            const lexical = b.kind == .let or b.kind == .@"const";
            const check = !declaring and ((lexical and (other_function or pos < b.init_end or b.in_switch)) or b.param_pending or b.kind == .derived_this);
            if (check) b.needs_tdz = true;
            if (other_function) {
                b.captured = true;
                // Every function between the reference and the binding carries it.
                var f: ?*FunctionInfo = here;
                while (f) |info| : (f = info.parent) {
                    if (info == b.function) break;
                    if (info.upvalueIndex(b) == null) try info.upvalues.append(r.arena, b);
                }
            }
            id.resolution = .{ .binding = .{ .binding = b, .check = check } };
            return;
        }
        if (std.mem.eql(u8, id.name, "undefined")) {
            id.resolution = .undefined_constant;
        } else if (std.mem.eql(u8, id.name, "NaN")) {
            id.resolution = .{ .constant = std.math.nan(f64) };
        } else if (std.mem.eql(u8, id.name, "Infinity")) {
            id.resolution = .{ .constant = std.math.inf(f64) };
        } else if (id.name.len > 0 and id.name[0] == '#') {
            return r.fail(pos, "Private field '{s}' must be declared in an enclosing class", .{id.name});
        } else if (r.globals(id.name)) |global| {
            id.resolution = .{ .global = global };
        } else if (r.hostGlobal(id.name)) |global| {
            id.resolution = .{ .global = global };
        } else if (unsupportedGlobal(id.name)) |what| {
            return r.fail(pos, "{s} is not supported", .{what});
        } else {
            id.resolution = .undeclared;
        }
    }
};

/// Whether a function's (or the script's) top level may declare `name` again as `new`
/// where it already has a binding of kind `old`: a var may repeat a var, a parameter or a
/// function, and a function a function (the later wins), a var or a parameter (it
/// overwrites their value on entry), as in JavaScript.
fn redeclarable(old: BindingKind, new: BindingKind) bool {
    return switch (new) {
        .@"var", .function => old == .@"var" or old == .parameter or old == .function,
        else => false,
    };
}

fn specialNamed(name: []const u8) ?Special {
    if (name.len == 0) return null;
    if (name[0] != 't' and name[0] != 'n' and name[0] != '%' and name[0] != 'a') return null;
    inline for (comptime std.enums.values(Special)) |which| {
        if (std.mem.eql(u8, name, comptime which.bindingName())) return which;
    }
    return null;
}

/// Globals of JavaScript that are outside the language, named in the compile error.
fn unsupportedGlobal(name: []const u8) ?[]const u8 {
    const names = std.StaticStringMap([]const u8).initComptime(.{
        .{ "eval", "eval" },                                          .{ "Function", "Function(...)" },
        .{ "WebAssembly", "WebAssembly" },                            .{ "BigInt", "BigInt" },
        .{ "Proxy", "Proxy" },                                        .{ "Reflect", "Reflect" },
        .{ "WeakMap", "WeakMap" },                                    .{ "WeakSet", "WeakSet" },
        .{ "WeakRef", "WeakRef" },                                    .{ "ArrayBuffer", "ArrayBuffer (typed arrays)" },
        .{ "SharedArrayBuffer", "SharedArrayBuffer (typed arrays)" }, .{ "Int8Array", "Int8Array (typed arrays)" },
        .{ "Uint8Array", "Uint8Array (typed arrays)" },               .{ "Uint8ClampedArray", "Uint8ClampedArray (typed arrays)" },
        .{ "Int16Array", "Int16Array (typed arrays)" },               .{ "Uint16Array", "Uint16Array (typed arrays)" },
        .{ "Int32Array", "Int32Array (typed arrays)" },               .{ "Uint32Array", "Uint32Array (typed arrays)" },
        .{ "Float32Array", "Float32Array (typed arrays)" },           .{ "Float64Array", "Float64Array (typed arrays)" },
        .{ "BigInt64Array", "BigInt64Array (typed arrays)" },         .{ "BigUint64Array", "BigUint64Array (typed arrays)" },
        .{ "globalThis", "globalThis" },                              .{ "Atomics", "Atomics" },
        .{ "Intl", "Intl" },                                          .{ "FinalizationRegistry", "FinalizationRegistry" },
        .{ "setImmediate", "setImmediate (use setTimeout)" },         .{ "require", "require (modules cannot import yet)" },
        .{ "module", "module (CommonJS)" },                           .{ "exports", "exports (CommonJS; use export)" },
        .{ "process", "process" },
    });
    return names.get(name);
}

/// The end offset of an expression, for the TDZ rule; positions inside the expression count as
/// before the end.
pub fn nodeEnd(node: *const Node) u32 {
    // A conservative end: the largest position of any node inside. Declarations are short, so
    // the walk is cheap, and only its comparison with later references matters.
    var end: u32 = node.pos + 1;
    maxPos(node, &end);
    return end;
}

fn maxPos(node: *const Node, end: *u32) void {
    end.* = @max(end.*, node.pos + 1);
    switch (node.data) {
        .template => |t| for (t.expressions) |e| maxPos(e, end),
        .array => |elements| for (elements) |e| maxPos(e, end),
        .object => |properties| for (properties) |p| {
            if (p.key == .computed) maxPos(p.key.computed, end);
            maxPos(p.value, end);
        },
        .function => |f| end.* = @max(end.*, f.end),
        .unary => |u| maxPos(u.operand, end),
        .update => |u| maxPos(u.target, end),
        .binary, .logical => |b| {
            maxPos(b.lhs, end);
            maxPos(b.rhs, end);
        },
        .conditional => |c| {
            maxPos(c.condition, end);
            maxPos(c.then, end);
            maxPos(c.otherwise, end);
        },
        .assign => |a| {
            maxPos(a.target, end);
            maxPos(a.value, end);
        },
        .sequence => |items| for (items) |e| maxPos(e, end),
        .member => |m| {
            maxPos(m.object, end);
            end.* = @max(end.*, m.name_pos + @as(u32, @intCast(m.name.len)));
        },
        .index => |i| {
            maxPos(i.object, end);
            maxPos(i.key, end);
        },
        .call, .new => |c| {
            maxPos(c.callee, end);
            for (c.arguments) |a| maxPos(a, end);
        },
        .chain, .spread => |inner| maxPos(inner, end),
        .class => |c| end.* = @max(end.*, c.constructor.end),
        .super_member => |key| maxPos(key, end),
        .yield_expression => |y| if (y.argument) |a| maxPos(a, end),
        .super_call => |c| for (c.arguments) |a| maxPos(a, end),
        .with_default => |d| {
            maxPos(d.target, end);
            maxPos(d.value, end);
        },
        .array_pattern => |p| {
            for (p.elements) |element| if (element) |e| maxPos(e, end);
            if (p.rest) |rest| maxPos(rest, end);
        },
        .object_pattern => |p| {
            for (p.properties) |property| maxPos(property.value, end);
            if (p.rest) |rest| maxPos(rest, end);
        },
        else => {},
    }
}
