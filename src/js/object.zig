pub const Kind = enum(u8) { plain };
pub const Object = struct { kind: Kind };
