use mcp_runtime::prelude::*;

// Every problem is reported at once, each at its own span, in the words of #[prompt].
#[prompt(complete(nobody = names))]
unsafe fn greet<T>(#[arg(default)] who: String, #[schemars(length(max = 3))] how: String) -> String {
    format!("{how} {who}")
}

fn names(_: &CompletionRequest) -> Vec<String> {
    Vec::new()
}

fn main() {}
