//! The hostile peer as a stdio server, for `tests/hostile.rs`: `hostile_peer '<script JSON>'`
//! (the format is in `tests/hostile/README.md`). It answers like a well-behaved MCP server,
//! except for the one request the script is about.

fn main() {
    let arg = std::env::args().nth(1).unwrap_or_else(|| "{}".into());
    let script = serde_json::from_str(&arg)
        .map_err(|e| e.to_string())
        .and_then(|v| mcp_integration::hostile::Script::from_json(&v));
    match script {
        Ok(script) => mcp_integration::hostile::stdio::serve(script),
        Err(e) => {
            eprintln!("hostile_peer: a bad script: {e}");
            std::process::exit(2);
        }
    }
}
