//! Run with: `cargo run -p example-client` (after `cargo build --example quickstart`), or
//! `cargo run -p example-client -- http://127.0.0.1:8000/mcp` against an HTTP server.
//!
//! The client side of MCP: spawn the quickstart server over stdio (or connect to a URL), list
//! its tools, and call them with typed results.

use mcp_runtime::client::{Client, ClientError};
use serde::Deserialize;
use serde_json::json;

/// `measure`'s structured result, read back into a Rust type.
#[derive(Debug, Deserialize)]
struct Measurement {
    distance: f64,
}

#[tokio::main]
async fn main() -> Result<(), ClientError> {
    let builder = Client::builder().info("example-client", env!("CARGO_PKG_VERSION"));
    let client = match std::env::args().nth(1) {
        Some(url) => builder.connect(&url).await?,
        None => {
            // The quickstart example of the root package, built beside this binary (in the
            // same target directory's `examples/`).
            let exe = std::env::current_exe().expect("the path of this example");
            let server = exe
                .with_file_name("examples")
                .join(format!("quickstart{}", std::env::consts::EXE_SUFFIX));
            builder.spawn(tokio::process::Command::new(server)).await?
        }
    };
    let info = client.server_info();
    println!(
        "connected to {} {} over protocol {}",
        info.as_ref().map_or("?", |i| i.name.as_str()),
        info.as_ref().map_or("?", |i| i.version.as_str()),
        client.protocol_version().as_str()
    );

    for tool in client.list_tools().await? {
        println!("- {}: {}", tool.name, tool.description.unwrap_or_default());
    }

    let sum: i64 = client.call_tool_as("add", json!({"a": 2, "b": 3})).await?;
    println!("add(2, 3) = {sum}");

    let m: Measurement = client
        .call_tool_as(
            "measure",
            json!({"from": {"x": 0, "y": 0}, "to": {"x": 3, "y": 4}}),
        )
        .await?;
    println!("measure((0,0), (3,4)).distance = {}", m.distance);

    let greeting = client.call_tool("greet", json!({"name": "Ada"})).await?;
    println!("greet: {greeting:?}");

    // A tool error is a result the model can read, not a protocol error.
    let failed = client
        .call_tool("divide", json!({"dividend": 1, "divisor": 0}))
        .await?;
    println!("divide by zero: is_error = {}", failed.is_error());

    client.close().await;
    Ok(())
}
