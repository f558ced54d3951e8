//! What `--client-config` prints: the entry a desktop client's configuration file needs to
//! reach this server, in the `mcpServers` form that Claude Desktop
//! (`claude_desktop_config.json`), Cursor (`mcp.json`) and Claude Code (`.mcp.json`) read:
//!
//! - stdio: `{"mcpServers": {NAME: {"command": PATH, "args": [...]}}}`, the client starts the
//!   binary itself;
//! - Streamable HTTP: `{"mcpServers": {NAME: {"url": "http://ADDR/mcp"}}}`, the client connects to
//!   a server already running (Cursor reads `url`; Claude Desktop adds remote servers in its
//!   settings instead, and VS Code's `mcp.json` names the block `servers`, not `mcpServers`).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// The stdio entry: `command` launched with `args`, under the server's `name`.
pub(crate) fn stdio(name: &str, command: &Path, args: &[String]) -> Value {
    json!({
        "mcpServers": {
            name: { "command": command.to_string_lossy(), "args": args }
        }
    })
}

/// The Streamable HTTP entry for a server listening on `addr`.
pub(crate) fn http(name: &str, addr: &str) -> Value {
    json!({ "mcpServers": { name: { "url": url(addr) } } })
}

/// The URL a client on this machine uses for a server bound to `addr`: an unspecified address
/// (`0.0.0.0`, `[::]`) listens on loopback too, and loopback is what the server's Host check
/// accepts without configuration.
pub(crate) fn url(addr: &str) -> String {
    let addr = addr.trim();
    let addr = if let Some(port) = addr.strip_prefix("0.0.0.0:") {
        format!("127.0.0.1:{port}")
    } else if let Some(port) = addr.strip_prefix("[::]:") {
        format!("[::1]:{port}")
    } else {
        addr.to_owned()
    };
    format!("http://{addr}/mcp")
}

/// The arguments the client must pass so that the binary serves stdio as it does now:
/// `--stdio` when the code picks another transport (`run!("ADDR")`), and the skills directory
/// (as an absolute path: clients start servers in a directory of their own) when one was given
/// on the command line or in `MCP_SKILLS_DIR` (the client's environment will not have it).
pub(crate) fn stdio_args(code_picks_http: bool, skills_dir: Option<&Path>) -> Vec<String> {
    let mut args = Vec::new();
    if code_picks_http {
        args.push("--stdio".to_owned());
    }
    if let Some(dir) = skills_dir {
        let dir: PathBuf = std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
        args.push("--skills-dir".to_owned());
        args.push(dir.to_string_lossy().into_owned());
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdio_entry_names_the_binary() {
        let entry = stdio("weather", Path::new("/opt/bin/weather"), &[]);
        assert_eq!(
            entry,
            json!({ "mcpServers": { "weather": { "command": "/opt/bin/weather", "args": [] } } })
        );
    }

    #[test]
    fn http_entry_is_a_url_a_local_client_can_reach() {
        assert_eq!(
            http("w", "127.0.0.1:8000"),
            json!({ "mcpServers": { "w": { "url": "http://127.0.0.1:8000/mcp" } } })
        );
        assert_eq!(url("0.0.0.0:9"), "http://127.0.0.1:9/mcp");
        assert_eq!(url("[::]:9"), "http://[::1]:9/mcp");
        assert_eq!(url("localhost:9"), "http://localhost:9/mcp");
    }

    #[test]
    fn stdio_args_restate_what_the_client_cannot_know() {
        assert!(stdio_args(false, None).is_empty());
        assert_eq!(stdio_args(true, None), ["--stdio"]);
        let args = stdio_args(false, Some(Path::new("skills")));
        assert_eq!(args[0], "--skills-dir");
        assert!(Path::new(&args[1]).is_absolute());
        assert!(args[1].ends_with("skills"));
    }
}
