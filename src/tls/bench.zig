//! Placeholder.
pub fn main() void {}
