use mcp_runtime::prelude::*;

// Every problem is reported at once, in the words of #[resource].
#[resource("files://{dir}", list = listing)]
fn file<T>(name: String, #[serde(default)] path: &str) -> String {
    format!("{name}{path}")
}

fn listing() -> Vec<Resource> {
    Vec::new()
}

fn main() {}
