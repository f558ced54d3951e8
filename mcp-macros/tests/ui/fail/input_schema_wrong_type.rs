use mcp_runtime::prelude::*;

fn not_a_schema() -> String {
    String::new()
}

/// Publishes a schema from a fn of the wrong type.
#[tool(input_schema = not_a_schema)]
async fn t() -> String {
    String::new()
}

fn main() {}
