use mcp_runtime::prelude::*;

#[tool]
struct NotAFunction;

fn main() {}
