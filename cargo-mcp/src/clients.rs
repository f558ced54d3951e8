//! Where each desktop client keeps its MCP servers, and the shape of an entry there, from each
//! client's documentation:
//!
//! - Claude Desktop: `claude_desktop_config.json` in `~/Library/Application Support/Claude/`
//!   (macOS) or `%APPDATA%\Claude\` (Windows); there is no Linux build from Anthropic, and the
//!   community builds read `$XDG_CONFIG_HOME/Claude/` (`~/.config/Claude/`). `mcpServers`,
//!   entries `{command, args, env}`.
//! - Claude Code: the user scope is the top-level `mcpServers` of `~/.claude.json` (what
//!   `claude mcp add --scope user` writes), entries `{type: "stdio", command, args, env}`.
//! - Cursor: the global `~/.cursor/mcp.json`, `mcpServers`, entries `{command, args, env}`.
//! - VS Code: `mcp.json` in the user profile (`~/.config/Code/User/` on Linux,
//!   `~/Library/Application Support/Code/User/` on macOS, `%APPDATA%\Code\User\` on Windows),
//!   a top-level `servers` object, entries `{type: "stdio", command, args, env}`.
//! - Gemini CLI: the user settings `~/.gemini/settings.json`, `mcpServers`, entries
//!   `{command, args, env}`.

use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::Failure;
use crate::cli::ClientKind;

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn home() -> Result<PathBuf, Failure> {
    env_path("HOME")
        .or_else(|| env_path("USERPROFILE"))
        .ok_or_else(|| Failure::new("cannot find the home directory: HOME is not set"))
}

/// The per-user application data directory: `~/Library/Application Support` (macOS),
/// `%APPDATA%` (Windows), `$XDG_CONFIG_HOME` or `~/.config` (elsewhere).
fn app_data() -> Result<PathBuf, Failure> {
    if cfg!(target_os = "macos") {
        return Ok(home()?.join("Library/Application Support"));
    }
    if cfg!(windows) {
        return env_path("APPDATA").ok_or_else(|| Failure::new("APPDATA is not set"));
    }
    match env_path("XDG_CONFIG_HOME") {
        Some(dir) => Ok(dir),
        None => Ok(home()?.join(".config")),
    }
}

impl ClientKind {
    /// The client's user-level configuration file.
    pub(crate) fn config_path(self) -> Result<PathBuf, Failure> {
        Ok(match self {
            ClientKind::ClaudeDesktop => app_data()?.join("Claude/claude_desktop_config.json"),
            ClientKind::ClaudeCode => home()?.join(".claude.json"),
            ClientKind::Cursor => home()?.join(".cursor/mcp.json"),
            ClientKind::Vscode => app_data()?.join("Code/User/mcp.json"),
            ClientKind::GeminiCli => home()?.join(".gemini/settings.json"),
        })
    }

    /// The member of the file that holds the servers.
    pub(crate) fn servers_key(self) -> &'static str {
        match self {
            ClientKind::Vscode => "servers",
            _ => "mcpServers",
        }
    }

    /// The client's name, for messages.
    pub(crate) fn title(self) -> &'static str {
        match self {
            ClientKind::ClaudeDesktop => "Claude Desktop",
            ClientKind::ClaudeCode => "Claude Code",
            ClientKind::Cursor => "Cursor",
            ClientKind::Vscode => "VS Code",
            ClientKind::GeminiCli => "Gemini CLI",
        }
    }

    /// A stdio entry in this client's shape, from the `{command, args}` entry the server's
    /// `--client-config` prints and the environment to set.
    pub(crate) fn entry(self, printed: &Value, env: &Map<String, Value>) -> Value {
        let mut entry = Map::new();
        if matches!(self, ClientKind::Vscode | ClientKind::ClaudeCode) {
            entry.insert("type".into(), "stdio".into());
        }
        for key in ["command", "args"] {
            if let Some(v) = printed.get(key) {
                entry.insert(key.into(), v.clone());
            }
        }
        if !env.is_empty() {
            entry.insert("env".into(), Value::Object(env.clone()));
        }
        Value::Object(entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn entries_take_each_client_s_shape() {
        let printed = json!({"command": "/bin/s", "args": []});
        let env: Map<String, Value> = [("K".to_owned(), json!("V"))].into_iter().collect();
        assert_eq!(
            ClientKind::Vscode.entry(&printed, &env),
            json!({"type": "stdio", "command": "/bin/s", "args": [], "env": {"K": "V"}})
        );
        assert_eq!(
            ClientKind::Cursor.entry(&printed, &Map::new()),
            json!({"command": "/bin/s", "args": []})
        );
        assert_eq!(ClientKind::Vscode.servers_key(), "servers");
        assert_eq!(ClientKind::GeminiCli.servers_key(), "mcpServers");
    }
}
