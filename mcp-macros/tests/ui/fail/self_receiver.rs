use mcp_runtime::prelude::*;

struct Server;

impl Server {
    #[tool]
    async fn method(&self, a: i64) -> i64 {
        a
    }
}

fn main() {}
