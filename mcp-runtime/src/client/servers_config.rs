//! The `mcpServers` file hosts share: [`ServersConfig`].

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde_json::{Map, Value};

/// The servers of an `mcpServers` file, the one hosts share: Claude Desktop's
/// `claude_desktop_config.json`, Cursor's `mcp.json`, Claude Code's `.mcp.json`, and VS Code's
/// `mcp.json` (which names the object `servers`). [`Clients`](super::Clients) connects to its
/// servers.
///
/// ```json
/// {
///   "mcpServers": {
///     "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"] },
///     "weather": { "command": "./weather", "env": { "API_KEY": "…" }, "cwd": "/opt/weather" },
///     "remote": { "url": "http://127.0.0.1:8000/mcp", "headers": { "Authorization": "Bearer …" } },
///     "old": { "type": "sse", "url": "http://127.0.0.1:9000/sse" },
///     "off": { "command": "unused", "disabled": true }
///   }
/// }
/// ```
///
/// Each entry is stdio (`command`, `args`, `env`, `cwd`) or HTTP (`url`, `headers`); `type`
/// (`stdio`; `http`, `streamable-http` or `streamableHttp`; `sse`) says which, and without it
/// `command` means stdio and `url` HTTP. `disabled: true` keeps an entry out of
/// [`enabled`](Self::enabled). Other fields (`autoApprove`, `timeout`, VS Code's
/// `envFile`, the top-level `inputs`, …) belong to the host and are ignored.
///
/// Values are taken as written: `${env:VAR}`, `${input:id}`, `${workspaceFolder}` and the like
/// are the host's to fill in (each host has its own variables, and prompts for some), for
/// instance with [`map_strings`](Self::map_strings) before connecting.
///
/// Entries are in the order of `serde_json`'s maps: by name, or as in the file when its
/// `preserve_order` feature is on.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ServersConfig {
    /// Every entry, disabled ones included.
    pub servers: Vec<ServerConfig>,
}

/// One entry of the file.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ServerConfig {
    /// Its key in the file: the name tools are namespaced with.
    pub name: String,
    /// How to reach it.
    pub transport: ServerTransport,
    /// `disabled: true`: the host keeps the entry but does not start it.
    pub disabled: bool,
}

/// How to reach one server.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ServerTransport {
    /// A child process speaking newline-delimited JSON-RPC on stdin and stdout.
    Stdio {
        /// The program (looked up in `PATH` when it has no `/`).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to the environment it inherits.
        env: BTreeMap<String, String>,
        /// The directory it starts in (by default the host's). A relative `command` with a
        /// `/` is resolved against the host's directory on some platforms and against `cwd`
        /// on others: give an absolute path.
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP endpoint (an HTTP+SSE server at that URL is reached through
    /// [`ClientBuilder::connect`](super::ClientBuilder::connect)'s fallback).
    Http {
        /// The endpoint, e.g. `http://127.0.0.1:8000/mcp`.
        url: String,
        /// Headers sent with every request (e.g. `Authorization`).
        headers: BTreeMap<String, String>,
    },
    /// A deprecated HTTP+SSE server (`type: "sse"`): `url` is its SSE endpoint.
    Sse {
        /// The SSE endpoint, often `…/sse`.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
    },
}

impl ServerTransport {
    /// The command that starts a stdio server (its arguments, variables and directory set), to
    /// give [`ClientBuilder::spawn`](super::ClientBuilder::spawn); `None` for an HTTP server.
    pub fn command(&self) -> Option<tokio::process::Command> {
        let ServerTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } = self
        else {
            return None;
        };
        let mut child = tokio::process::Command::new(command);
        child.args(args).envs(env);
        if let Some(dir) = cwd {
            child.current_dir(dir);
        }
        Some(child)
    }

    /// The headers sent with every request to an HTTP server (none for a stdio server).
    pub fn headers(&self) -> impl Iterator<Item = (&str, &str)> {
        let headers = match self {
            ServerTransport::Http { headers, .. } | ServerTransport::Sse { headers, .. } => {
                Some(headers)
            }
            ServerTransport::Stdio { .. } => None,
        };
        headers
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

/// What is wrong with a servers file: where (the entry, and the field in it) and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServersConfigError {
    entry: Option<String>,
    field: Option<String>,
    message: String,
}

impl ServersConfigError {
    fn file(message: impl Into<String>) -> Self {
        ServersConfigError {
            entry: None,
            field: None,
            message: message.into(),
        }
    }

    /// The server entry at fault (its name), when one is.
    pub fn entry(&self) -> Option<&str> {
        self.entry.as_deref()
    }

    /// The field at fault within the entry (`args[2]`, `env.HOME`, …), when one is.
    pub fn field(&self) -> Option<&str> {
        self.field.as_deref()
    }

    /// What is wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ServersConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.entry, &self.field) {
            (Some(entry), Some(field)) => {
                write!(f, "server {entry:?}, field `{field}`: {}", self.message)
            }
            (Some(entry), None) => write!(f, "server {entry:?}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ServersConfigError {}

impl ServersConfig {
    /// Reads a servers file.
    pub fn read(path: impl AsRef<Path>) -> Result<ServersConfig, ServersConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| {
            ServersConfigError::file(format!("could not read {}: {e}", path.display()))
        })?;
        text.parse()
            .map_err(|e: ServersConfigError| ServersConfigError {
                message: format!("{}: {}", path.display(), e.message),
                ..e
            })
    }

    /// Reads a servers file's JSON: an object with `mcpServers` (Claude Desktop, Cursor,
    /// Claude Code) or `servers` (VS Code).
    pub fn from_value(file: &Value) -> Result<ServersConfig, ServersConfigError> {
        let Value::Object(file) = file else {
            return Err(ServersConfigError::file(
                "a servers file is a JSON object with `mcpServers` (or VS Code's `servers`)",
            ));
        };
        let (key, servers) = match (file.get("mcpServers"), file.get("servers")) {
            (Some(_), Some(_)) => {
                return Err(ServersConfigError::file(
                    "the file has both `mcpServers` and `servers`: keep one",
                ));
            }
            (Some(s), None) => ("mcpServers", s),
            (None, Some(s)) => ("servers", s),
            (None, None) => {
                return Err(ServersConfigError::file(
                    "the file has no `mcpServers` object (nor VS Code's `servers`)",
                ));
            }
        };
        let Value::Object(entries) = servers else {
            return Err(ServersConfigError::file(format!(
                "`{key}` must be an object of servers by name, not {}",
                kind(servers)
            )));
        };
        let servers = entries
            .iter()
            .map(|(name, entry)| ServerConfig::from_entry(name, entry))
            .collect::<Result<_, _>>()?;
        Ok(ServersConfig { servers })
    }

    /// The entries not `disabled`.
    pub fn enabled(&self) -> impl Iterator<Item = &ServerConfig> {
        self.servers.iter().filter(|s| !s.disabled)
    }

    /// The entry named `name`.
    pub fn get(&self, name: &str) -> Option<&ServerConfig> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// Replaces every value a host may write variables in (`command`, `args`, `env` values,
    /// `cwd`, `url`, `headers` values) with `f` of it: where a host expands `${env:VAR}`,
    /// `${input:id}` or its own variables.
    ///
    /// ```
    /// use mcp_runtime::client::ServersConfig;
    ///
    /// let mut config: ServersConfig = r#"{"mcpServers": {"api": {
    ///     "url": "http://127.0.0.1:8000/mcp",
    ///     "headers": {"Authorization": "Bearer ${env:API_TOKEN}"}
    /// }}}"#
    ///     .parse()
    ///     .unwrap();
    /// config.map_strings(|s| s.replace("${env:API_TOKEN}", "secret"));
    /// ```
    pub fn map_strings(&mut self, mut f: impl FnMut(&str) -> String) {
        let mut map = |s: &mut String| *s = f(s);
        for server in &mut self.servers {
            match &mut server.transport {
                ServerTransport::Stdio {
                    command,
                    args,
                    env,
                    cwd,
                } => {
                    map(command);
                    args.iter_mut().for_each(&mut map);
                    env.values_mut().for_each(&mut map);
                    if let Some(dir) = cwd {
                        let mut s = dir.to_string_lossy().into_owned();
                        map(&mut s);
                        *dir = PathBuf::from(s);
                    }
                }
                ServerTransport::Http { url, headers } | ServerTransport::Sse { url, headers } => {
                    map(url);
                    headers.values_mut().for_each(&mut map);
                }
            }
        }
    }
}

impl FromStr for ServersConfig {
    type Err = ServersConfigError;

    /// Reads a servers file's text.
    fn from_str(text: &str) -> Result<ServersConfig, ServersConfigError> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| ServersConfigError::file(format!("not JSON: {e}")))?;
        ServersConfig::from_value(&value)
    }
}

impl ServerConfig {
    fn from_entry(name: &str, entry: &Value) -> Result<ServerConfig, ServersConfigError> {
        let fail = |field: Option<&str>, message: String| ServersConfigError {
            entry: Some(name.to_owned()),
            field: field.map(str::to_owned),
            message,
        };
        if name.is_empty() {
            return Err(fail(None, "a server needs a name".into()));
        }
        let Value::Object(entry) = entry else {
            return Err(fail(
                None,
                format!("must be an object, not {}", kind(entry)),
            ));
        };
        let string = |field: &str| -> Result<Option<String>, ServersConfigError> {
            match entry.get(field) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(fail(
                    Some(field),
                    format!("must be a string, not {}", kind(other)),
                )),
            }
        };
        let disabled = match entry.get("disabled") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                return Err(fail(
                    Some("disabled"),
                    format!("must be true or false, not {}", kind(other)),
                ));
            }
        };
        let command = string("command")?;
        // Windsurf spells it `serverUrl`.
        let url = match string("url")? {
            Some(url) => Some(url),
            None => string("serverUrl")?,
        };
        let kind_of = string("type")?;
        let transport = match kind_of.as_deref() {
            Some("stdio") => Kind::Stdio,
            Some("http" | "streamable-http" | "streamableHttp" | "streamable_http") => Kind::Http,
            Some("sse") => Kind::Sse,
            Some(other) => {
                return Err(fail(
                    Some("type"),
                    format!("unknown transport {other:?} (stdio, http, streamable-http or sse)"),
                ));
            }
            None => match (&command, &url) {
                (Some(_), None) => Kind::Stdio,
                (None, Some(_)) => Kind::Http,
                (Some(_), Some(_)) => {
                    return Err(fail(
                        None,
                        "has both `command` and `url`: give `type` (stdio or http) or keep one"
                            .into(),
                    ));
                }
                (None, None) => {
                    return Err(fail(
                        None,
                        "has neither `command` (a stdio server) nor `url` (an HTTP server)".into(),
                    ));
                }
            },
        };
        let transport = match transport {
            Kind::Stdio => {
                let Some(command) = command.filter(|c| !c.is_empty()) else {
                    return Err(fail(
                        Some("command"),
                        "a stdio server needs a command".into(),
                    ));
                };
                let args = match entry.get("args") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Array(args)) => args
                        .iter()
                        .enumerate()
                        .map(|(i, arg)| match arg {
                            Value::String(s) => Ok(s.clone()),
                            other => Err(fail(
                                Some(&format!("args[{i}]")),
                                format!("must be a string, not {}", kind(other)),
                            )),
                        })
                        .collect::<Result<_, _>>()?,
                    Some(other) => {
                        return Err(fail(
                            Some("args"),
                            format!("must be an array of strings, not {}", kind(other)),
                        ));
                    }
                };
                ServerTransport::Stdio {
                    command,
                    args,
                    env: string_map(entry, "env", &fail)?,
                    cwd: string("cwd")?.map(PathBuf::from),
                }
            }
            Kind::Http | Kind::Sse => {
                let Some(url) = url.filter(|u| !u.is_empty()) else {
                    return Err(fail(Some("url"), "an HTTP server needs a url".into()));
                };
                let headers = string_map(entry, "headers", &fail)?;
                if transport == Kind::Sse {
                    ServerTransport::Sse { url, headers }
                } else {
                    ServerTransport::Http { url, headers }
                }
            }
        };
        Ok(ServerConfig {
            name: name.to_owned(),
            transport,
            disabled,
        })
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Stdio,
    Http,
    Sse,
}

/// An object of strings (`env`, `headers`).
fn string_map(
    entry: &Map<String, Value>,
    field: &str,
    fail: &impl Fn(Option<&str>, String) -> ServersConfigError,
) -> Result<BTreeMap<String, String>, ServersConfigError> {
    match entry.get(field) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                other => Err(fail(
                    Some(&format!("{field}.{k}")),
                    format!("must be a string, not {}", kind(other)),
                )),
            })
            .collect(),
        Some(other) => Err(fail(
            Some(field),
            format!("must be an object of strings, not {}", kind(other)),
        )),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<ServersConfig, ServersConfigError> {
        ServersConfig::from_value(&v)
    }

    #[test]
    fn claude_desktop_cursor_and_vs_code_files_read() {
        let config = parse(json!({"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "server-files", "/tmp"], "env": {"A": "1"}},
            "remote": {"url": "http://127.0.0.1:8000/mcp", "headers": {"Authorization": "Bearer t"}},
            "old": {"type": "sse", "url": "http://127.0.0.1:9000/sse"},
            "off": {"command": "x", "disabled": true, "autoApprove": ["y"]}
        }}))
        .unwrap();
        assert_eq!(config.servers.len(), 4);
        assert_eq!(
            config.get("files").unwrap().transport,
            ServerTransport::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "server-files".into(), "/tmp".into()],
                env: [("A".to_owned(), "1".to_owned())].into(),
                cwd: None,
            }
        );
        assert!(matches!(
            &config.get("remote").unwrap().transport,
            ServerTransport::Http { url, headers }
                if url == "http://127.0.0.1:8000/mcp" && headers["Authorization"] == "Bearer t"
        ));
        assert!(matches!(
            config.get("old").unwrap().transport,
            ServerTransport::Sse { .. }
        ));
        let enabled: Vec<_> = config.enabled().map(|s| s.name.as_str()).collect();
        assert_eq!(enabled, ["files", "old", "remote"]);

        // VS Code: `servers`, `type` on every entry, `inputs` beside.
        let vscode = parse(json!({
            "inputs": [{"type": "promptString", "id": "token", "password": true}],
            "servers": {
                "local": {"type": "stdio", "command": "node", "args": ["s.js"], "cwd": "${workspaceFolder}"},
                "api": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"X": "${input:token}"}}
            }
        }))
        .unwrap();
        assert!(matches!(
            &vscode.get("local").unwrap().transport,
            ServerTransport::Stdio { cwd: Some(cwd), .. } if cwd == Path::new("${workspaceFolder}")
        ));
        assert!(matches!(
            vscode.get("api").unwrap().transport,
            ServerTransport::Http { .. }
        ));
        for spelling in ["streamable-http", "streamableHttp"] {
            let c = parse(json!({"mcpServers": {"a": {"type": spelling, "url": "http://h/mcp"}}}));
            assert!(matches!(
                c.unwrap().servers[0].transport,
                ServerTransport::Http { .. }
            ));
        }
    }

    #[test]
    fn a_bad_file_says_which_entry_and_which_field() {
        let error = |v: Value| parse(v).unwrap_err();
        let e = error(json!({"mcpServers": {"a": {"command": "x", "args": ["ok", 3]}}}));
        assert_eq!((e.entry(), e.field()), (Some("a"), Some("args[1]")));
        assert_eq!(
            e.to_string(),
            "server \"a\", field `args[1]`: must be a string, not a number"
        );
        let e = error(json!({"mcpServers": {"a": {"command": "x", "env": {"K": 1}}}}));
        assert_eq!(e.field(), Some("env.K"));
        let e = error(json!({"mcpServers": {"b": {"url": 7}}}));
        assert_eq!((e.entry(), e.field()), (Some("b"), Some("url")));
        let e = error(json!({"mcpServers": {"c": {"type": "websocket", "url": "ws://h"}}}));
        assert_eq!(e.field(), Some("type"));
        assert!(e.to_string().contains("websocket"), "{e}");
        let e = error(json!({"mcpServers": {"d": {"args": ["x"]}}}));
        assert_eq!((e.entry(), e.field()), (Some("d"), None));
        let e = error(json!({"mcpServers": {"e": {"type": "stdio", "url": "http://h"}}}));
        assert_eq!(e.field(), Some("command"));
        let e = error(json!({"mcpServers": {"f": {"command": "x", "disabled": "yes"}}}));
        assert_eq!(e.field(), Some("disabled"));
        let e = error(json!({"mcpServers": {"g": "npx server"}}));
        assert_eq!((e.entry(), e.field()), (Some("g"), None));
        assert!(error(json!({"mcpServers": []})).entry().is_none());
        assert!(
            error(json!({"other": {}}))
                .to_string()
                .contains("mcpServers")
        );
        assert!(
            error(json!({"mcpServers": {}, "servers": {}}))
                .to_string()
                .contains("both")
        );
        let e = "{\"mcpServers\": {".parse::<ServersConfig>().unwrap_err();
        assert!(e.to_string().starts_with("not JSON"), "{e}");
    }

    #[test]
    fn variables_are_the_hosts_to_fill_in() {
        let mut config = parse(json!({"mcpServers": {
            "a": {"command": "${env:HOME}/bin/s", "args": ["${input:x}"], "env": {"K": "${env:K}"}},
            "b": {"url": "http://h/mcp", "headers": {"Authorization": "Bearer ${env:T}"}}
        }}))
        .unwrap();
        let kept = config.clone();
        assert_eq!(config, kept, "taken as written");
        config.map_strings(|s| {
            s.replace("${env:HOME}", "/home/ada")
                .replace("${env:T}", "t")
        });
        let ServerTransport::Stdio { command, args, .. } = &config.get("a").unwrap().transport
        else {
            panic!()
        };
        assert_eq!(command, "/home/ada/bin/s");
        assert_eq!(args, &["${input:x}"]);
        let ServerTransport::Http { headers, .. } = &config.get("b").unwrap().transport else {
            panic!()
        };
        assert_eq!(headers["Authorization"], "Bearer t");
    }
}
