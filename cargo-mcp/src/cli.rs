//! The command line: every command, its arguments and its `--help`.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// The arguments as clap should see them: cargo runs `cargo-mcp mcp ARGS…` for `cargo mcp
/// ARGS…`, and the `mcp` it passes along is not an argument (`cargo-mcp ARGS…`, run directly,
/// has none).
pub(crate) fn argv(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut args: Vec<OsString> = args.into_iter().collect();
    if args.get(1).is_some_and(|a| a == "mcp") {
        args.remove(1);
    }
    args
}

/// Create, run, call, inspect, install and test MCP servers built on mcp-runtime.
#[derive(Parser, Debug)]
#[command(
    name = "cargo-mcp",
    bin_name = "cargo mcp",
    version,
    propagate_version = true
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// List a server's tools, resources, resource templates and prompts.
    List(ListArgs),
    /// Call a tool: `cargo mcp call add a=2 b=3` or `cargo mcp call add '{"a": 2, "b": 3}'`.
    Call(CallArgs),
    /// Read a resource by its URI.
    Read(ReadArgs),
    /// Render a prompt with its arguments (`key=value` pairs).
    Prompt(PromptArgs),
    /// Suggest values for an argument of a prompt or a resource template.
    Complete(CompleteArgs),
    /// Print the server's description (identity, capabilities, tools, resources, prompts) or its
    /// server card, without connecting a client.
    Inspect(InspectArgs),
    /// Build the server in release mode and add it to a desktop client's configuration.
    Install(InstallArgs),
    /// Create a new server crate: the quickstart server, a test and a README.
    New(NewArgs),
    /// Build and run the server, and rebuild and restart it whenever a source file changes.
    Dev(DevArgs),
    /// Run a test suite against the current package's server.
    #[command(subcommand)]
    Test(TestCommand),
}

#[derive(Subcommand, Debug)]
pub(crate) enum TestCommand {
    /// Run the official MCP conformance suite (pinned; installed with npm on first use) against
    /// the server over Streamable HTTP, and print its scores.
    Conformance(ConformanceArgs),
}

/// Which binary of the current cargo package is the server.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct PackageArgs {
    /// The binary target of the current package to run (default: its only one).
    #[arg(long, value_name = "NAME", conflicts_with = "example")]
    pub(crate) bin: Option<String>,
    /// The example of the current package to run instead of a binary.
    #[arg(long, value_name = "NAME")]
    pub(crate) example: Option<String>,
    /// The package of the workspace that has the server (cargo's `-p`).
    #[arg(long, short = 'p', value_name = "SPEC")]
    pub(crate) package: Option<String>,
    /// The Cargo.toml to use (cargo's `--manifest-path`).
    #[arg(long, value_name = "PATH")]
    pub(crate) manifest_path: Option<PathBuf>,
}

/// Which server to talk to, and how.
#[derive(Args, Debug)]
pub(crate) struct ServerArgs {
    /// Start this command and speak MCP over its stdin and stdout, e.g.
    /// `--stdio "./target/debug/weather --skills-dir skills"`.
    #[arg(long, value_name = "COMMAND", conflicts_with_all = ["url", "bin", "example", "package"])]
    pub(crate) stdio: Option<String>,
    /// Connect to the Streamable HTTP (or HTTP+SSE) server at this URL, e.g.
    /// `http://127.0.0.1:8000/mcp`.
    #[arg(long, value_name = "URL", conflicts_with_all = ["bin", "example", "package"])]
    pub(crate) url: Option<String>,
    /// An HTTP header sent with every request (repeatable), e.g. `--header "Authorization: Bearer …"`.
    #[arg(
        long = "header",
        short = 'H',
        value_name = "NAME:VALUE",
        requires = "url"
    )]
    pub(crate) headers: Vec<String>,
    /// Log in with OAuth when the server asks for it (the browser's login page is printed;
    /// tokens are kept in the user's cache directory, `cargo-mcp/tokens.json`).
    #[arg(long, requires = "url")]
    pub(crate) oauth: bool,
    #[command(flatten)]
    pub(crate) package: PackageArgs,
    /// The protocol: `auto` (ask the server), `2026-07-28` (stateless), or a session-era
    /// version (`2025-11-25`, `2025-06-18`, `2025-03-26`, `2024-11-05`).
    #[arg(long, value_name = "VERSION", default_value = "auto")]
    pub(crate) protocol: String,
    /// Seconds to wait for the server to start and for each answer.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub(crate) timeout: u64,
    /// Print the results as JSON (one document on stdout), for scripts.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args, Debug)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    pub(crate) server: ServerArgs,
}

#[derive(Args, Debug)]
pub(crate) struct CallArgs {
    /// The tool's name.
    pub(crate) tool: String,
    /// Its arguments: `key=value` pairs, each value read as the tool's input schema types it
    /// (integer, number, boolean, string; arrays and objects as JSON), or one JSON object.
    #[arg(value_name = "ARGS")]
    pub(crate) arguments: Vec<String>,
    #[command(flatten)]
    pub(crate) server: ServerArgs,
}

#[derive(Args, Debug)]
pub(crate) struct ReadArgs {
    /// The resource's URI, e.g. `config://app`.
    pub(crate) uri: String,
    #[command(flatten)]
    pub(crate) server: ServerArgs,
}

#[derive(Args, Debug)]
pub(crate) struct PromptArgs {
    /// The prompt's name.
    pub(crate) name: String,
    /// Its arguments: `key=value` pairs (prompt arguments are strings), or one JSON object.
    #[arg(value_name = "ARGS")]
    pub(crate) arguments: Vec<String>,
    #[command(flatten)]
    pub(crate) server: ServerArgs,
}

#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("reference").required(true).args(["prompt", "template"])))]
pub(crate) struct CompleteArgs {
    /// Complete an argument of this prompt.
    #[arg(long, value_name = "NAME")]
    pub(crate) prompt: Option<String>,
    /// Complete a variable of this resource template, e.g. `tickets://{id}`.
    #[arg(long, value_name = "URI_TEMPLATE")]
    pub(crate) template: Option<String>,
    /// The argument (or template variable) to complete.
    pub(crate) argument: String,
    /// What is typed so far.
    #[arg(default_value = "")]
    pub(crate) value: String,
    /// An argument already chosen (repeatable), as `key=value`.
    #[arg(long = "context", value_name = "KEY=VALUE")]
    pub(crate) context: Vec<String>,
    #[command(flatten)]
    pub(crate) server: ServerArgs,
}

#[derive(Args, Debug)]
pub(crate) struct InspectArgs {
    /// Print the server card (SEP-2127) instead of the description.
    #[arg(long)]
    pub(crate) server_card: bool,
    /// Run this command (the server's binary and its arguments) instead of building the
    /// current package.
    #[arg(long, value_name = "COMMAND", conflicts_with_all = ["bin", "example", "package"])]
    pub(crate) stdio: Option<String>,
    #[command(flatten)]
    pub(crate) package: PackageArgs,
    /// Print the JSON as the server gives it, rather than a summary.
    #[arg(long)]
    pub(crate) json: bool,
}

/// The desktop clients `install` knows.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClientKind {
    /// Claude Desktop: claude_desktop_config.json in its application support directory.
    ClaudeDesktop,
    /// Claude Code: the user's ~/.claude.json.
    ClaudeCode,
    /// Cursor: the user's ~/.cursor/mcp.json.
    Cursor,
    /// VS Code: the user profile's mcp.json.
    Vscode,
    /// Gemini CLI: the user's ~/.gemini/settings.json.
    GeminiCli,
}

#[derive(Args, Debug)]
pub(crate) struct InstallArgs {
    /// The client whose configuration gets the server.
    #[arg(value_enum)]
    pub(crate) client: ClientKind,
    /// The server's name in the client (default: the server's own name).
    #[arg(long, value_name = "NAME")]
    pub(crate) name: Option<String>,
    /// An environment variable the client sets for the server (repeatable), as `KEY=VALUE`.
    #[arg(long = "env", value_name = "KEY=VALUE")]
    pub(crate) env: Vec<String>,
    /// Replace an entry of the same name (without it, an existing entry is an error).
    #[arg(long)]
    pub(crate) force: bool,
    /// Print the entry instead of writing it.
    #[arg(long)]
    pub(crate) print: bool,
    /// Write to this file instead of the client's usual one.
    #[arg(long, value_name = "PATH")]
    pub(crate) config: Option<PathBuf>,
    /// Install this server binary (an mcp-runtime server) instead of building the current
    /// package's in release mode.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["bin", "example", "package"])]
    pub(crate) binary: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) package: PackageArgs,
}

#[derive(Args, Debug)]
pub(crate) struct NewArgs {
    /// The new crate's name (and directory, unless `--dir` says otherwise).
    pub(crate) name: String,
    /// Serve Streamable HTTP (on 127.0.0.1:8000) instead of stdio.
    #[arg(long)]
    pub(crate) http: bool,
    /// Require OAuth access tokens (an OAuth 2.1 resource server; implies `--http`).
    #[arg(long)]
    pub(crate) auth: bool,
    /// Depend on the mcp-runtime of this local checkout (the repository's root directory)
    /// instead of the published crate.
    #[arg(long, value_name = "DIR")]
    pub(crate) path: Option<PathBuf>,
    /// Where to create the crate (default: ./NAME).
    #[arg(long, value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub(crate) struct DevArgs {
    #[command(flatten)]
    pub(crate) package: PackageArgs,
    /// Serve Streamable HTTP on this address (restarts keep it, so a connected Inspector
    /// reconnects); without it the server is started over stdio for the Inspector to launch.
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<String>,
}

#[derive(Args, Debug)]
pub(crate) struct ConformanceArgs {
    #[command(flatten)]
    pub(crate) package: PackageArgs,
    /// The address the server listens on during the run (the suite speaks Streamable HTTP;
    /// default: a free port on loopback).
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_value = "127.0.0.1:0",
          default_missing_value = "127.0.0.1:0")]
    pub(crate) http: String,
    /// Which requirements to score: `2025-11-25`, `2026-07-28`, or `all` (every scenario).
    #[arg(long, value_name = "WHICH", default_value = "2025-11-25")]
    pub(crate) requirements: String,
    /// Where the suite's results go (default: a new temporary directory).
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory as _;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn cargo_s_extra_argument_is_dropped() {
        let args = |a: &[&str]| argv(a.iter().map(OsString::from));
        assert_eq!(
            argv_strs(&args(&["cargo-mcp", "mcp", "list"])),
            ["cargo-mcp", "list"]
        );
        assert_eq!(
            argv_strs(&args(&["cargo-mcp", "list"])),
            ["cargo-mcp", "list"]
        );
    }

    fn argv_strs(a: &[OsString]) -> Vec<&str> {
        a.iter().map(|s| s.to_str().unwrap()).collect()
    }
}
