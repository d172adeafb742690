//! The syntax tree the parser builds and the compiler walks: one `Node` per construct,
//! allocated in the compilation's arena and linked by pointers.
//!
//! The tree only ever holds constructs inside the language; whatever is outside it is refused
//! by the parser (or by the resolver, for names) with its position, so the compiler need not
//! check again. Scope analysis (scope.zig) writes its results into the tree: a scope on each
//! node that opens one and a resolution on each identifier.
const std = @import("std");

const scope = @import("scope.zig");
const program_file = @import("Program.zig");

pub const Node = struct {
    /// Byte offset of the construct's first character in the source.
    pos: u32,
    data: Data,
    /// Written in parentheses (which matters to `??` mixing and `-x ** y`).
    parenthesized: bool = false,
};

pub const Data = union(enum) {
    // Expressions.
    number: f64,
    /// Cooked value, in WTF-8.
    string: []const u8,
    template: Template,
    /// `/pattern/flags`: the source text of each, the pattern already checked.
    regexp: struct { pattern: []const u8, flags: []const u8 },
    identifier: *Identifier,
    true_literal,
    false_literal,
    null_literal,
    array: []const *Node,
    object: []const Property,
    function: *Function,
    unary: Unary,
    update: Update,
    binary: Binary,
    logical: Binary,
    conditional: Conditional,
    assign: Assign,
    sequence: []const *Node,
    /// The strings object of a tagged template's site: the first argument of the tag's call.
    template_object: *TemplateObject,
    member: Member,
    index: Index,
    call: Call,
    new: Call,
    /// The boundary of an optional chain: `a?.b.c` short-circuits up to here.
    chain: *Node,
    spread: *Node,
    /// An elision in an array literal: `[1, , 3]`.
    hole,
    class: *Class,
    /// `super(...)` in a derived class's constructor.
    super_call: Call,
    /// `super.name` or `super[key]` in a method: `key` is a string node for `.name`.
    super_member: *Node,
    /// `yield x` or `yield* x`, in a generator.
    yield_expression: Yield,

    // Patterns (targets of declarations, parameters and destructuring assignments).
    array_pattern: ArrayPattern,
    object_pattern: ObjectPattern,
    /// A target with a default: the `x = 1` in `[x = 1] = a` or `function f(x = 1)`.
    with_default: WithDefault,

    // Statements.
    declaration: Declaration,
    function_declaration: *Function,
    class_declaration: *Class,
    /// A class field's definition on `this`, in the function that initialises the fields.
    field_definition: FieldDefinition,
    expression_statement: *Node,
    block: Block,
    if_statement: If,
    for_statement: For,
    for_in: ForEach,
    for_of: ForEach,
    while_statement: While,
    do_while: While,
    /// The label named, if any.
    break_statement: ?[]const u8,
    continue_statement: ?[]const u8,
    /// `name: statement`; nested labels nest.
    labeled: Labeled,
    return_statement: ?*Node,
    throw_statement: *Node,
    try_statement: Try,
    switch_statement: Switch,
    empty_statement,
};

pub const Identifier = struct {
    name: []const u8,
    /// Filled in by the resolver.
    resolution: scope.Resolution = .unresolved,
};

pub const TemplateObject = struct {
    /// The cooked pieces, and the pieces as written (`strings.raw`).
    cooked: []const []const u8,
    raw: []const []const u8,
    pos: u32,
    /// The hidden top-level binding that holds the site's object (set by the resolver).
    binding: ?*scope.Binding = null,
};

pub const Template = struct {
    /// Cooked text pieces, one more than `expressions`.
    quasis: []const []const u8,
    expressions: []const *Node,
};

pub const PropertyKind = enum { init, shorthand, spread, method, getter, setter };

pub const Key = union(enum) {
    /// A name, string or number key, as the string the property is stored under.
    static: []const u8,
    computed: *Node,
};

pub const Property = struct {
    kind: PropertyKind,
    key: Key,
    /// The value; for `spread`, the object spread; for `shorthand`, the identifier.
    value: *Node,
    /// `{ a = 1 }`: only valid once the literal is reinterpreted as a pattern.
    shorthand_default: ?*Node = null,
    pos: u32,
};

pub const UnaryOp = enum { negate, plus, not, bit_not, typeof, void, delete };

pub const Unary = struct { op: UnaryOp, operand: *Node };

pub const Update = struct { increment: bool, prefix: bool, target: *Node };

pub const BinaryOp = enum {
    add,
    sub,
    mul,
    div,
    mod,
    pow,
    shl,
    sar,
    shr,
    bit_and,
    bit_or,
    bit_xor,
    eq,
    ne,
    strict_eq,
    strict_ne,
    lt,
    gt,
    le,
    ge,
    instanceof,
    in,
    // Logical (short-circuit) operators, used by `logical` nodes and compound assignment.
    and_,
    or_,
    nullish,
};

pub const Binary = struct { op: BinaryOp, lhs: *Node, rhs: *Node };

pub const Conditional = struct { condition: *Node, then: *Node, otherwise: *Node };

pub const Assign = struct {
    /// null for plain `=`; the operator of a compound assignment otherwise.
    op: ?BinaryOp,
    target: *Node,
    value: *Node,
};

pub const Member = struct {
    object: *Node,
    name: []const u8,
    name_pos: u32,
    optional: bool,
};

pub const Index = struct {
    object: *Node,
    key: *Node,
    optional: bool,
};

pub const Call = struct {
    callee: *Node,
    arguments: []const *Node,
    optional: bool = false,
};

pub const ArrayPattern = struct {
    /// null for an elision.
    elements: []const ?*Node,
    rest: ?*Node,
};

pub const PatternProperty = struct {
    key: Key,
    /// The target, possibly `with_default`.
    value: *Node,
    pos: u32,
};

pub const ObjectPattern = struct {
    properties: []const PatternProperty,
    rest: ?*Node,
};

pub const WithDefault = struct { target: *Node, value: *Node };

pub const DeclarationKind = enum { let, @"const", @"var" };

pub const Declarator = struct {
    target: *Node,
    init: ?*Node,
};

pub const Declaration = struct {
    kind: DeclarationKind,
    declarators: []const Declarator,
};

pub const Labeled = struct {
    label: []const u8,
    body: *Node,
};

pub const Block = struct {
    body: []const *Node,
    scope: ?*scope.Scope = null,
};

pub const If = struct { condition: *Node, then: *Node, otherwise: ?*Node };

pub const For = struct {
    init: ?*Node,
    condition: ?*Node,
    update: ?*Node,
    body: *Node,
    scope: ?*scope.Scope = null,
};

pub const ForEach = struct {
    /// let, const or var for a declaration; null for an assignment target (`for (x of xs)`).
    kind: ?DeclarationKind,
    target: *Node,
    iterable: *Node,
    body: *Node,
    scope: ?*scope.Scope = null,
    /// `for await (x of xs)`.
    is_await: bool = false,
};

pub const While = struct { condition: *Node, body: *Node };

pub const Try = struct {
    block: *Node,
    parameter: ?*Node,
    handler: ?*Node,
    finalizer: ?*Node,
    /// The catch clause's scope (its parameter).
    catch_scope: ?*scope.Scope = null,
};

pub const Case = struct {
    /// null for `default`.
    test_value: ?*Node,
    body: []const *Node,
    pos: u32,
};

pub const Switch = struct {
    discriminant: *Node,
    cases: []const Case,
    scope: ?*scope.Scope = null,
};

pub const Parameter = struct {
    /// An identifier or a pattern.
    target: *Node,
    default: ?*Node,
};

pub const Function = struct {
    /// What it is, for `new` and `this` (arrow functions have `is_arrow` too).
    kind: program_file.Kind = .normal,
    name: ?[]const u8,
    pos: u32,
    end: u32,
    parameters: []const Parameter,
    rest: ?*Node,
    /// Statements; for an arrow function with an expression body, one return statement.
    body: []const *Node,
    is_arrow: bool,
    is_declaration: bool,
    /// A class's field initialisers or static blocks (`arguments` is a SyntaxError there).
    is_class_initializer: bool = false,
    /// A named function expression binds its own name inside itself.
    self_binding: ?*scope.Binding = null,
    /// Filled in by the resolver.
    info: ?*scope.FunctionInfo = null,
};

pub const Yield = struct {
    argument: ?*Node,
    /// `yield*`: every value of the argument's iteration.
    delegate: bool,
    /// `await x`, which the parser writes as a yield (an async function suspends the same
    /// way); in an async generator the two differ.
    is_await: bool = false,
};

pub const ClassMemberKind = enum { method, getter, setter };

pub const ClassMember = struct {
    kind: ClassMemberKind,
    is_static: bool,
    key: Key,
    function: *Function,
    pos: u32,
};

pub const FieldKind = enum { field, method, getter, setter };

/// A member defined on each instance (or, for static ones, on the class) when it is made:
/// a field, or a private method or accessor.
pub const FieldDefinition = struct {
    /// A string node for a public name; an identifier naming the private name's hidden
    /// binding (`#x`) for a private one.
    key: *Node,
    value: ?*Node,
    pos: u32,
    kind: FieldKind = .field,
};

pub const ComputedFieldKey = struct {
    /// The hidden binding's name (`%key` and the position: no identifier can spell it).
    name: []const u8,
    expression: *Node,
    /// Where the key starts: its turn among the class's other elements.
    pos: u32,
};

pub const Class = struct {
    name: ?[]const u8,
    pos: u32,
    heritage: ?*Node,
    /// The constructor written, or one made up (`constructor(...args) { super(...args); }`).
    constructor: *Function,
    members: []const ClassMember,
    /// The instance fields, as a method run on each new instance (null when none).
    fields: ?*Function,
    /// The static fields and blocks, as a method run once on the class (null when none).
    statics: ?*Function,
    /// The private names its body declares (`#x`), each once.
    private_names: []const []const u8 = &.{},
    /// The computed names of its fields (`[k] = 1`), in source order: each is evaluated once,
    /// when the class is, into a hidden binding of the class's scope that the field reads.
    computed_field_keys: []const ComputedFieldKey = &.{},
    /// The class's own name inside its body (read-only), when it has a name.
    self_binding: ?*scope.Binding = null,
    name_scope: ?*scope.Scope = null,
    /// A declaration's binding in the enclosing scope.
    outer_binding: ?*scope.Binding = null,
};

pub const ExportKind = enum { function, binding };

pub const Export = struct {
    /// The name importers see ("default" for the default export).
    name: []const u8,
    /// The top-level binding exported.
    local: []const u8,
    pos: u32,
};

pub const Program = struct {
    body: []const *Node,
    exports: []const Export,
    is_module: bool,
    /// The top-level code as a function (no parameters).
    function: *Function,
};
