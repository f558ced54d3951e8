//! What [`run!`](crate::run) does: pick the transport (code, then environment, then command
//! line), set up logging on stderr, build the runtime and serve.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};

use crate::{Server, ServerBuilder, Transport};

/// The `--help` text, naming the program as `program`.
fn usage(program: &str) -> String {
    format!(
        "\
Usage: {program} [--stdio | --http ADDR] [--skills-dir DIR] [--manifest | --describe | --client-config]

  --stdio            serve MCP on stdin/stdout (the default)
  --http ADDR        serve Streamable HTTP on ADDR, e.g. 127.0.0.1:8000
  --skills-dir DIR   serve the agent skills in DIR (one folder with a SKILL.md per skill)
  --manifest         print the server card (SEP-2127) an HTTP server serves at /mcp/server-card
                     (without its remotes), and exit; --server-card is the same
  --describe         print the server's name, version, instructions, capabilities, tools (with
                     their schemas), resources, templates and prompts as JSON, and exit
  --client-config    print the mcpServers entry a desktop client needs to start this server
                     over stdio (with --http ADDR: to connect to it at http://ADDR/mcp), and exit

Environment: MCP_TRANSPORT=stdio|ADDR chooses the transport too, MCP_SKILLS_DIR=DIR the skills
directory (the command line wins), MCP_ALLOWED_ORIGINS=ORIGIN,... the browser origins an HTTP
server accepts and answers with CORS (e.g. https://app.example.com); MCP_ALLOWED_HOSTS=HOST,...
the Host names it accepts (what a reverse proxy forwards; default: loopback names when reached
through loopback, any name otherwise); MCP_AUTH_ISSUER and
MCP_AUTH_RESOURCE (MCP_AUTH_SCOPES optional) require OAuth access tokens over HTTP (with the
`auth` feature); MCP_REQUEST_STATE_KEYS=HEX,... the keys that seal 2026-07-28 requestState
(each at least 64 hex digits; the first seals, all open; every instance of a fleet needs the
same), MCP_REQUEST_STATE_AUDIENCE=NAME the fleet's name in it (default: the server's name);
MCP_ROUTE_TOKEN=TOKEN (1 to 16 letters and digits) starts every session id an HTTP server
mints, for a load balancer to route on; MCP_DRAIN_DELAY=SECONDS how long an HTTP server keeps
serving after SIGTERM while /readyz answers 503 (default 5 on a non-loopback address, 0 on
loopback); MCP_INSTANCE_HEADER=NAME names the instance in an X-Mcp-Instance header on every
HTTP answer (off by default); MCP_SESSION_ERA=serve|stateless|reject how an HTTP server serves
session-era clients (protocol 2025-11-25 and earlier: with sessions, the default; one request at
a time without a session table; or not at all); MCP_SERVER_CARD=on|off whether an HTTP server
serves its server card (default: on without authorization), MCP_SERVER_CARD_NAME=NS/NAME its
reverse-DNS name (default: from Cargo's repository or the website); RUST_LOG sets the log filter (logs go to stderr)."
    )
}

/// The name the usage text gives the program: the file name of `argv0` (what the user ran),
/// else `package` (when the program was started without an argv[0]).
fn program_name(argv0: Option<&OsStr>, package: impl FnOnce() -> String) -> String {
    argv0
        .and_then(|a| Path::new(a).file_name())
        .map(|name| name.to_string_lossy().into_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(package)
}

/// The name `run!` gave the server: the package's (`CARGO_PKG_NAME`).
fn package_name(builder: ServerBuilder) -> String {
    // The builder keeps its name to itself; building is cheap and has no side effects.
    builder
        .build()
        .map_or_else(|_| "SERVER".to_owned(), |server| server.info().name.clone())
}

/// What the environment and the command line chose.
#[derive(Debug, PartialEq)]
pub(crate) struct Choice {
    pub(crate) transport: Transport,
    /// A skills directory to serve (`None`: whatever the code set, if anything).
    pub(crate) skills_dir: Option<PathBuf>,
    /// Serve, or describe the server and exit.
    pub(crate) action: Action,
}

/// What to do once the server is built.
#[derive(Debug, Default, PartialEq)]
pub(crate) enum Action {
    /// Serve on the chosen transport.
    #[default]
    Serve,
    /// `--describe`: print [`Server::manifest`] and exit.
    Describe,
    /// `--manifest` or `--server-card`: print [`Server::server_card`] and exit.
    ServerCard,
    /// `--client-config`: print the client configuration entry for the chosen transport and
    /// exit.
    ClientConfig,
}

/// The process environment `run!` reads.
#[derive(Default)]
pub(crate) struct Env {
    /// `MCP_TRANSPORT`.
    pub(crate) transport: Option<String>,
    /// `MCP_SKILLS_DIR`.
    pub(crate) skills_dir: Option<OsString>,
}

/// Where the transport choice came from; the later ones win.
#[cfg(test)]
pub(crate) fn choose_transport(
    in_code: Option<Transport>,
    env: Option<String>,
    args: impl IntoIterator<Item = String>,
) -> Result<Transport, String> {
    let env = Env {
        transport: env,
        skills_dir: None,
    };
    choose(in_code, env, args).map(|c| c.transport)
}

/// The transport and skills directory: the code, then the environment, then the command line.
pub(crate) fn choose(
    in_code: Option<Transport>,
    env: Env,
    args: impl IntoIterator<Item = String>,
) -> Result<Choice, String> {
    let mut chosen = in_code.unwrap_or(Transport::Stdio);
    if let Some(env) = env.transport.filter(|v| !v.trim().is_empty()) {
        chosen = Transport::from(env);
    }
    let mut skills_dir = env.skills_dir.filter(|v| !v.is_empty()).map(PathBuf::from);
    let mut action = Action::Serve;
    let mut set_action = |new: Action| match action {
        Action::Serve => {
            action = new;
            Ok(())
        }
        _ if action == new => Ok(()),
        _ => Err(
            "--manifest (or --server-card), --describe and --client-config: choose one".to_owned(),
        ),
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--stdio" => chosen = Transport::Stdio,
            "--http" => match args.next() {
                Some(addr) if !addr.starts_with('-') => chosen = Transport::Http(addr),
                _ => return Err("--http needs an address, e.g. --http 127.0.0.1:8000".into()),
            },
            "--skills-dir" => match args.next() {
                Some(dir) if !dir.is_empty() && !dir.starts_with('-') => {
                    skills_dir = Some(dir.into());
                }
                _ => return Err("--skills-dir needs a directory, e.g. --skills-dir skills/".into()),
            },
            "--manifest" | "--server-card" => set_action(Action::ServerCard)?,
            "--describe" => set_action(Action::Describe)?,
            "--client-config" => set_action(Action::ClientConfig)?,
            "-h" | "--help" => return Err(String::new()),
            other => {
                if let Some(addr) = other.strip_prefix("--http=").filter(|a| !a.is_empty()) {
                    chosen = Transport::Http(addr.to_owned());
                } else if let Some(dir) = other
                    .strip_prefix("--skills-dir=")
                    .filter(|d| !d.is_empty())
                {
                    skills_dir = Some(dir.into());
                } else {
                    return Err(format!("unknown argument {other:?}"));
                }
            }
        }
    }
    Ok(Choice {
        transport: chosen,
        skills_dir,
        action,
    })
}

/// Installs a stderr `tracing` subscriber (filter from `RUST_LOG`, default `info`) unless the
/// program installed one already.
pub fn init_logging() {
    #[cfg(feature = "env-filter")]
    {
        use tracing_subscriber::EnvFilter;
        let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(io::stderr)
            .with_ansi(false)
            .try_init();
    }
    #[cfg(not(feature = "env-filter"))]
    {
        use tracing_subscriber::Layer;
        use tracing_subscriber::layer::SubscriberExt;
        use tracing_subscriber::util::SubscriberInitExt;
        let (filter, problem) = log_targets(std::env::var("RUST_LOG").ok().as_deref());
        let fmt = tracing_subscriber::fmt::layer()
            .with_writer(io::stderr)
            .with_ansi(false);
        let installed = tracing_subscriber::registry()
            .with(fmt.with_filter(filter))
            .try_init()
            .is_ok();
        // Said once the logger is there to say it (a program's own subscriber has its own
        // filter, and `RUST_LOG` is then none of ours).
        if let (true, Some(problem)) = (installed, problem) {
            tracing::warn!("{problem}");
        }
    }
}

/// `RUST_LOG` as `target=level` directives (the default, `info`, when unset or empty), and why
/// it was not understood when it was not: span and field filters need the `env-filter` feature.
#[cfg(not(feature = "env-filter"))]
fn log_targets(rust_log: Option<&str>) -> (tracing_subscriber::filter::Targets, Option<String>) {
    use tracing_subscriber::filter::Targets;
    let info = || "info".parse::<Targets>().expect("`info` is a level");
    match rust_log.map(str::trim).filter(|s| !s.is_empty()) {
        None => (info(), None),
        Some(directives) => match directives.parse::<Targets>() {
            Ok(targets) => (targets, None),
            Err(e) => (
                info(),
                Some(format!(
                    "RUST_LOG={directives:?} is not a list of `target=level` directives ({e}); \
                     logging at `info`. Span and field filters need the `env-filter` feature \
                     of mcp-runtime"
                )),
            ),
        },
    }
}

/// The body of `run!()`: never returns on failure (exits with status 2 after printing why).
pub fn run_main(builder: ServerBuilder, in_code: Option<Transport>) {
    let env = Env {
        transport: std::env::var("MCP_TRANSPORT").ok(),
        skills_dir: std::env::var_os("MCP_SKILLS_DIR"),
    };
    let code_picks_http = matches!(in_code, Some(Transport::Http(_)));
    let args = std::env::args().skip(1);
    let (transport, builder, action, skills_dir) = match choose(in_code, env, args) {
        Ok(Choice {
            transport,
            skills_dir,
            action,
        }) => match skills_dir {
            Some(dir) => (transport, builder.skills_dir(&dir), action, Some(dir)),
            None => (transport, builder, action, None),
        },
        Err(msg) => {
            let argv0 = std::env::args_os().next();
            let usage = usage(&program_name(argv0.as_deref(), || package_name(builder)));
            if msg.is_empty() {
                eprintln!("{usage}");
                std::process::exit(0);
            }
            eprintln!("error: {msg}\n\n{usage}");
            std::process::exit(2);
        }
    };
    let builder = match builder.with_env() {
        Ok(builder) => builder,
        Err(msg) => {
            eprintln!("error: {msg}");
            std::process::exit(2);
        }
    };
    init_logging();
    let server = match builder.build() {
        Ok(server) => server,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    match action {
        Action::Serve => {}
        Action::Describe => print_json_and_exit(&server.manifest()),
        Action::ServerCard => match server.server_card(None) {
            Some(card) => print_json_and_exit(&card),
            None => {
                eprintln!(
                    "error: this server has no server card name: set `repository` in Cargo.toml \
                     (a GitHub URL names it io.github.<owner>/<name>), a website URL, \
                     ServerBuilder::card_name, or MCP_SERVER_CARD_NAME=com.example/name"
                );
                std::process::exit(2);
            }
        },
        Action::ClientConfig => {
            let name = &server.info().name;
            let config = match &transport {
                Transport::Http(addr) => crate::desktop_config::http(name, addr),
                Transport::Stdio => match std::env::current_exe() {
                    Ok(exe) => {
                        let args = crate::desktop_config::stdio_args(
                            code_picks_http,
                            skills_dir.as_deref(),
                        );
                        crate::desktop_config::stdio(name, &exe, &args)
                    }
                    Err(e) => {
                        eprintln!("error: cannot find the path of this program: {e}");
                        std::process::exit(2);
                    }
                },
            };
            print_json_and_exit(&config);
        }
    }
    let result = server.run(transport);
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}

/// Prints `value` as pretty JSON, alone on stdout, and exits: 0, or 2 when stdout is closed.
fn print_json_and_exit(value: &serde_json::Value) -> ! {
    use std::io::Write as _;
    let text = serde_json::to_string_pretty(value).expect("JSON values serialize");
    let mut out = io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            eprintln!("error: writing to stdout: {e}");
            std::process::exit(2);
        }
    }
}

/// Runs `serving` on a new multi-threaded tokio runtime.
fn block_on(serving: impl std::future::Future<Output = io::Result<()>>) -> io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let result = runtime.block_on(serving);
    // Sync tools still running on the blocking pool must not keep the process alive.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    result
}

impl Server {
    /// Serves on `transport` until the client goes away or a SIGINT/SIGTERM, on a new
    /// multi-threaded tokio runtime. Use [`Server::serve`] inside an existing runtime.
    pub fn run(self, transport: impl Into<Transport>) -> io::Result<()> {
        block_on(self.serve(transport))
    }

    /// Serves on `transport` inside the current tokio runtime.
    pub async fn serve(self, transport: impl Into<Transport>) -> io::Result<()> {
        match transport.into() {
            #[cfg(feature = "stdio")]
            Transport::Stdio => {
                tracing::info!(name = %self.info().name, version = %self.info().version, "serving MCP on stdio");
                crate::transport::serve_stdio(self).await
            }
            #[cfg(feature = "http")]
            Transport::Http(addr) => {
                let config = crate::transport::HttpConfig::new(addr).with_env()?;
                crate::transport::serve_http(self, config).await
            }
            #[allow(unreachable_patterns)]
            other => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "cannot serve {other}: mcp-runtime was built without the `{}` feature",
                    match other {
                        Transport::Stdio => "stdio",
                        Transport::Http(_) => "http",
                    }
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    /// Without `env-filter`, `RUST_LOG` still takes what the README shows (a level, and
    /// `target=level` directives); a span or field filter falls back to `info` with a warning
    /// that names the feature, rather than silently logging something else.
    #[cfg(not(feature = "env-filter"))]
    #[test]
    fn rust_log_directives_without_env_filter() {
        use tracing::Level;
        use tracing::level_filters::LevelFilter;
        let (unset, problem) = super::log_targets(None);
        assert!(problem.is_none());
        assert!(unset.would_enable("anything", &Level::INFO));
        assert!(!unset.would_enable("anything", &Level::DEBUG));
        let (targets, problem) = super::log_targets(Some("mcp_runtime::request=debug,warn"));
        assert!(problem.is_none());
        assert!(targets.would_enable("mcp_runtime::request", &Level::DEBUG));
        assert!(!targets.would_enable("hyper", &Level::INFO));
        assert!(targets.would_enable("hyper", &Level::WARN));
        let (fallback, problem) = super::log_targets(Some("[request{method=ping}]=trace"));
        let problem = problem.expect("a span filter is reported");
        assert!(problem.contains("`env-filter` feature"), "{problem}");
        assert_eq!(fallback.default_level(), Some(LevelFilter::INFO));
    }

    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn command_line_beats_environment_beats_code() {
        let code = Some(Transport::http("0.0.0.0:1"));
        assert_eq!(
            choose_transport(None, None, args(&[])),
            Ok(Transport::Stdio)
        );
        assert_eq!(
            choose_transport(code.clone(), None, args(&[])),
            Ok(Transport::http("0.0.0.0:1"))
        );
        assert_eq!(
            choose_transport(code.clone(), Some("stdio".into()), args(&[])),
            Ok(Transport::Stdio)
        );
        assert_eq!(
            choose_transport(code, Some("stdio".into()), args(&["--http", "127.0.0.1:9"])),
            Ok(Transport::http("127.0.0.1:9"))
        );
        assert_eq!(
            choose_transport(None, Some("127.0.0.1:5".into()), args(&["--stdio"])),
            Ok(Transport::Stdio)
        );
        assert_eq!(
            choose_transport(None, None, args(&["--http=h:1"])),
            Ok(Transport::http("h:1"))
        );
    }

    #[test]
    fn usage_names_the_program_that_was_run() {
        let package = || "my-package".to_owned();
        let name = |argv0: &str| program_name(Some(OsStr::new(argv0)), package);
        assert_eq!(name("/usr/local/bin/weather-server"), "weather-server");
        assert_eq!(name("./target/debug/examples/quickstart"), "quickstart");
        assert_eq!(name("quickstart"), "quickstart");
        assert_eq!(name(""), "my-package");
        assert_eq!(program_name(None, package), "my-package");
        assert!(usage("weather-server").starts_with("Usage: weather-server [--stdio"));
    }

    #[test]
    fn skills_dir_from_environment_then_command_line() {
        let env = |dir: Option<&str>| Env {
            transport: None,
            skills_dir: dir.map(OsString::from),
        };
        let dir = |env, a: &[&str]| choose(None, env, args(a)).map(|c| c.skills_dir);
        assert_eq!(dir(env(None), &[]), Ok(None));
        assert_eq!(dir(env(Some("")), &[]), Ok(None));
        assert_eq!(dir(env(Some("/env")), &[]), Ok(Some("/env".into())));
        assert_eq!(
            dir(env(Some("/env")), &["--skills-dir", "cli/"]),
            Ok(Some("cli/".into()))
        );
        assert_eq!(
            dir(env(None), &["--http", "h:1", "--skills-dir=s"]),
            Ok(Some("s".into()))
        );
        assert!(dir(env(None), &["--skills-dir"]).is_err());
        assert!(dir(env(None), &["--skills-dir", "--stdio"]).is_err());
        let both = choose(
            None,
            env(None),
            args(&["--skills-dir", "s", "--http", "h:1"]),
        );
        assert_eq!(both.map(|c| c.transport), Ok(Transport::http("h:1")));
    }

    #[test]
    fn manifest_describe_and_client_config_are_actions() {
        let action = |a: &[&str]| choose(None, Env::default(), args(a)).map(|c| c.action);
        assert_eq!(action(&[]), Ok(Action::Serve));
        // --manifest is the server card (issue #31), --server-card its other name.
        assert_eq!(action(&["--manifest"]), Ok(Action::ServerCard));
        assert_eq!(action(&["--server-card"]), Ok(Action::ServerCard));
        assert_eq!(
            action(&["--server-card", "--manifest"]),
            Ok(Action::ServerCard)
        );
        assert_eq!(action(&["--describe"]), Ok(Action::Describe));
        assert_eq!(action(&["--client-config"]), Ok(Action::ClientConfig));
        assert_eq!(
            action(&["--describe", "--skills-dir", "s", "--describe"]),
            Ok(Action::Describe)
        );
        for pair in [
            ["--manifest", "--client-config"],
            ["--describe", "--manifest"],
            ["--describe", "--client-config"],
        ] {
            assert!(
                action(&pair).unwrap_err().contains("choose one"),
                "{pair:?}"
            );
        }
        // The transport stays parsed: --client-config prints the entry for it.
        let both = choose(
            None,
            Env::default(),
            args(&["--client-config", "--http", "127.0.0.1:8000"]),
        )
        .unwrap();
        assert_eq!(both.action, Action::ClientConfig);
        assert_eq!(both.transport, Transport::http("127.0.0.1:8000"));
        for flag in [
            "--manifest",
            "--server-card",
            "--describe",
            "--client-config",
        ] {
            assert!(usage("s").contains(flag), "{flag}");
        }
    }

    #[test]
    fn usage_lists_every_variable_the_environment_sets() {
        for var in [
            "MCP_TRANSPORT",
            "MCP_SKILLS_DIR",
            "MCP_ALLOWED_ORIGINS",
            "MCP_ALLOWED_HOSTS",
            "MCP_AUTH_ISSUER",
            "MCP_AUTH_RESOURCE",
            "MCP_AUTH_SCOPES",
            "MCP_REQUEST_STATE_KEYS",
            "MCP_REQUEST_STATE_AUDIENCE",
            "MCP_ROUTE_TOKEN",
            "MCP_DRAIN_DELAY",
            "MCP_INSTANCE_HEADER",
            "MCP_SESSION_ERA",
            "MCP_SERVER_CARD",
            "MCP_SERVER_CARD_NAME",
            "RUST_LOG",
        ] {
            assert!(usage("s").contains(var), "{var}");
        }
    }

    #[test]
    fn bad_arguments_are_errors() {
        assert!(choose_transport(None, None, args(&["--http"])).is_err());
        assert!(
            choose_transport(None, None, args(&["--bogus"]))
                .unwrap_err()
                .contains("--bogus")
        );
        assert_eq!(
            choose_transport(None, None, args(&["--help"])),
            Err(String::new())
        );
    }
}
