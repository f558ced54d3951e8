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
Usage: {program} [--stdio | --http ADDR] [--skills-dir DIR] [--manifest | --client-config]

  --stdio            serve MCP on stdin/stdout (the default)
  --http ADDR        serve Streamable HTTP on ADDR, e.g. 127.0.0.1:8000
  --skills-dir DIR   serve the agent skills in DIR (one folder with a SKILL.md per skill)
  --manifest         print the server's name, version, instructions, tools (with their
                     schemas), resources, templates and prompts as JSON, and exit
  --client-config    print the mcpServers entry a desktop client needs to start this server
                     over stdio (with --http ADDR: to connect to it at http://ADDR/mcp), and exit

Environment: MCP_TRANSPORT=stdio|ADDR chooses the transport too, MCP_SKILLS_DIR=DIR the skills
directory (the command line wins), MCP_ALLOWED_ORIGINS=ORIGIN,... the browser origins an HTTP
server accepts and answers with CORS (e.g. https://app.example.com); MCP_AUTH_ISSUER and
MCP_AUTH_RESOURCE (MCP_AUTH_SCOPES optional) require OAuth access tokens over HTTP (with the
`auth` feature); MCP_REQUEST_STATE_KEYS=HEX,... the keys that seal 2026-07-28 requestState
(each at least 64 hex digits; the first seals, all open; every instance of a fleet needs the
same), MCP_REQUEST_STATE_AUDIENCE=NAME the fleet's name in it (default: the server's name);
MCP_ROUTE_TOKEN=TOKEN (1 to 16 letters and digits) starts every session id an HTTP server
mints, for a load balancer to route on; MCP_DRAIN_DELAY=SECONDS how long an HTTP server keeps
serving after SIGTERM while /readyz answers 503 (default 5 on a non-loopback address, 0 on
loopback); RUST_LOG sets the log filter (logs go to stderr)."
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
    /// `--manifest`: print [`Server::manifest`] and exit.
    Manifest,
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
        _ => Err("--manifest and --client-config: choose one".to_owned()),
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
            "--manifest" => set_action(Action::Manifest)?,
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

/// `MCP_REQUEST_STATE_KEYS` and `MCP_REQUEST_STATE_AUDIENCE`, when set, configure the
/// `requestState` key ring and audience (over what the code set). A value that is set but
/// unusable is an error naming the variable: falling back to a random key would break every
/// multi-round request that crosses instances, with nothing in the logs to say why.
pub(crate) fn request_state_from_env(
    mut builder: ServerBuilder,
    keys: Option<OsString>,
    audience: Option<OsString>,
) -> Result<ServerBuilder, String> {
    if let Some(raw) = keys {
        let raw = raw
            .to_str()
            .ok_or("MCP_REQUEST_STATE_KEYS: not valid UTF-8 (use comma-separated hex keys)")?;
        let keys = parse_state_keys(raw).map_err(|e| format!("MCP_REQUEST_STATE_KEYS: {e}"))?;
        builder = builder.request_state_keys(keys);
    }
    if let Some(raw) = audience {
        let audience = raw
            .to_str()
            .map(str::trim)
            .ok_or("MCP_REQUEST_STATE_AUDIENCE: not valid UTF-8")?;
        if audience.is_empty() {
            return Err("MCP_REQUEST_STATE_AUDIENCE: set but empty (name the fleet, or unset it for the server's name)".into());
        }
        builder = builder.request_state_audience(audience);
    }
    Ok(builder)
}

/// `MCP_REQUEST_STATE_KEYS`: comma-separated keys, each at least 64 hex digits (32 bytes), the
/// first sealing. Errors say which key is wrong and how, never what it is (keys are secret).
fn parse_state_keys(raw: &str) -> Result<Vec<Vec<u8>>, String> {
    let entries: Vec<&str> = raw.split(',').map(str::trim).collect();
    if entries.iter().all(|e| e.is_empty()) {
        return Err("set but empty (give comma-separated hex keys, or unset it)".into());
    }
    entries
        .iter()
        .enumerate()
        .map(|(i, hex)| {
            let n = i + 1;
            if hex.is_empty() {
                return Err(format!("key {n} is empty (a stray comma?)"));
            }
            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!("key {n} is not hexadecimal"));
            }
            if hex.len() < 64 {
                return Err(format!(
                    "key {n} has {} hex digits; each key needs at least 64 (32 random bytes, e.g. from `openssl rand -hex 32`)",
                    hex.len()
                ));
            }
            base16ct::mixed::decode_vec(hex)
                .map_err(|_| format!("key {n} has an odd number of hex digits"))
        })
        .collect()
}

/// Installs a stderr `tracing` subscriber (filter from `RUST_LOG`, default `info`) unless the
/// program installed one already.
pub fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .with_ansi(false)
        .try_init();
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
    #[cfg(feature = "http")]
    let origins = match std::env::var("MCP_ALLOWED_ORIGINS") {
        Ok(raw) => match parse_origins(&raw) {
            Ok(origins) => origins,
            Err(msg) => {
                eprintln!("error: MCP_ALLOWED_ORIGINS: {msg}");
                std::process::exit(2);
            }
        },
        Err(_) => Vec::new(),
    };
    let builder = match request_state_from_env(
        builder,
        std::env::var_os("MCP_REQUEST_STATE_KEYS"),
        std::env::var_os("MCP_REQUEST_STATE_AUDIENCE"),
    ) {
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
        Action::Manifest => print_json_and_exit(&server.manifest()),
        Action::ClientConfig => {
            let name = &server.info().name;
            let config = match &transport {
                Transport::Http(addr) => crate::client_config::http(name, addr),
                Transport::Stdio => match std::env::current_exe() {
                    Ok(exe) => {
                        let args = crate::client_config::stdio_args(
                            code_picks_http,
                            skills_dir.as_deref(),
                        );
                        crate::client_config::stdio(name, &exe, &args)
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
    let result = match transport {
        #[cfg(feature = "http")]
        Transport::Http(addr) if !origins.is_empty() => {
            let config = crate::transport::HttpConfig::new(addr).with_allowed_origins(origins);
            match with_env_http(config) {
                Ok(config) => block_on(crate::transport::serve_http(server, config)),
                Err(e) => Err(e),
            }
        }
        transport => server.run(transport),
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}

/// What the environment configures of an HTTP server: `MCP_ROUTE_TOKEN`, the authorization
/// variables and `MCP_DRAIN_DELAY`.
#[cfg(feature = "http")]
fn with_env_http(config: crate::transport::HttpConfig) -> io::Result<crate::transport::HttpConfig> {
    let config = match route_token(std::env::var("MCP_ROUTE_TOKEN").ok().as_deref())? {
        Some(token) => config.with_route_token(token),
        None => config,
    };
    with_env_auth(config).and_then(with_env_drain_delay)
}

/// `MCP_ROUTE_TOKEN`, if set: a bad value is an error naming the variable.
#[cfg(feature = "http")]
fn route_token(raw: Option<&str>) -> io::Result<Option<crate::transport::http::RouteToken>> {
    raw.map(|raw| {
        crate::transport::http::RouteToken::new(raw).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("MCP_ROUTE_TOKEN={raw:?}: {e}"),
            )
        })
    })
    .transpose()
}

/// `MCP_AUTH_ISSUER` / `MCP_AUTH_RESOURCE` / `MCP_AUTH_SCOPES` make an HTTP server a resource
/// server (HTTP only: a stdio server belongs to its client).
#[cfg(feature = "http")]
fn with_env_auth(config: crate::transport::HttpConfig) -> io::Result<crate::transport::HttpConfig> {
    #[cfg(feature = "auth")]
    match crate::auth::Auth::from_env() {
        None => Ok(config),
        Some(Ok(auth)) => Ok(config.with_auth(auth)),
        Some(Err(e)) => Err(io::Error::new(io::ErrorKind::InvalidInput, e)),
    }
    #[cfg(not(feature = "auth"))]
    Ok(config)
}

/// `MCP_DRAIN_DELAY` (seconds) sets [`HttpConfig::with_drain_delay`]; unset or empty keeps
/// the default.
///
/// [`HttpConfig::with_drain_delay`]: crate::transport::HttpConfig::with_drain_delay
#[cfg(feature = "http")]
fn with_env_drain_delay(
    config: crate::transport::HttpConfig,
) -> io::Result<crate::transport::HttpConfig> {
    match std::env::var("MCP_DRAIN_DELAY") {
        Ok(raw) if !raw.trim().is_empty() => match parse_drain_delay(&raw) {
            Ok(delay) => Ok(config.with_drain_delay(delay)),
            Err(why) => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("MCP_DRAIN_DELAY: {why}"),
            )),
        },
        _ => Ok(config),
    }
}

/// The longest drain delay `MCP_DRAIN_DELAY` may ask for: more is a typo, not a plan (an
/// orchestrator kills the process long before).
#[cfg(feature = "http")]
const MAX_DRAIN_DELAY_SECS: f64 = 600.0;

/// `MCP_DRAIN_DELAY`'s value: seconds, a whole or decimal number from 0 to 600.
#[cfg(feature = "http")]
fn parse_drain_delay(raw: &str) -> Result<std::time::Duration, String> {
    let raw = raw.trim();
    let secs: f64 = raw
        .parse()
        .ok()
        .filter(|s: &f64| s.is_finite())
        .ok_or_else(|| format!("{raw:?} is not a number of seconds (e.g. 5 or 0.5)"))?;
    if !(0.0..=MAX_DRAIN_DELAY_SECS).contains(&secs) {
        return Err(format!(
            "{raw} seconds is out of range (0 to {MAX_DRAIN_DELAY_SECS})"
        ));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
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

/// `MCP_ALLOWED_ORIGINS`: comma-separated origins, each `http://` or `https://` and a host with
/// an optional port, nothing after it (the `Origin` a browser sends is compared exactly, so
/// anything else would never match).
#[cfg(feature = "http")]
fn parse_origins(raw: &str) -> Result<Vec<String>, String> {
    raw.split(',')
        .map(str::trim)
        .filter(|o| !o.is_empty())
        .map(|origin| {
            let origin = origin.strip_suffix('/').unwrap_or(origin);
            match crate::transport::http::origin_problem(origin) {
                Some(why) => Err(why),
                None => Ok(origin.to_owned()),
            }
        })
        .collect()
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
                let config = with_env_http(crate::transport::HttpConfig::new(addr))?;
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
    use super::*;

    #[cfg(feature = "http")]
    #[test]
    fn route_tokens_from_the_environment_are_checked() {
        assert_eq!(route_token(None).unwrap(), None);
        assert_eq!(route_token(Some("i1")).unwrap().unwrap().as_str(), "i1");
        for bad in ["", "i-1", "a very long route token"] {
            let e = route_token(Some(bad)).unwrap_err().to_string();
            assert!(e.starts_with("MCP_ROUTE_TOKEN="), "{e}");
        }
    }

    #[cfg(feature = "http")]
    #[test]
    fn origins_from_the_environment_are_checked() {
        assert_eq!(
            parse_origins(" https://app.example.com, http://127.0.0.1:5173/ ,").unwrap(),
            ["https://app.example.com", "http://127.0.0.1:5173"]
        );
        for bad in [
            "app.example.com",
            "https://*.example.com",
            "https://a.example/path",
            "ftp://x",
            "https://",
        ] {
            let e = parse_origins(bad).unwrap_err();
            assert!(e.contains("is not an origin"), "{bad}: {e}");
        }
    }

    #[cfg(feature = "http")]
    #[test]
    fn the_drain_delay_from_the_environment_is_checked() {
        use std::time::Duration;
        assert_eq!(parse_drain_delay("5"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_drain_delay(" 0.25 "), Ok(Duration::from_millis(250)));
        assert_eq!(parse_drain_delay("0"), Ok(Duration::ZERO));
        for bad in ["-1", "601", "NaN", "inf", "5s", "", "1e400"] {
            assert!(parse_drain_delay(bad).is_err(), "{bad:?} accepted");
        }
        assert!(
            parse_drain_delay("5s")
                .unwrap_err()
                .contains("not a number")
        );
        assert!(
            parse_drain_delay("-1")
                .unwrap_err()
                .contains("out of range")
        );
        assert!(usage("s").contains("MCP_DRAIN_DELAY"));
    }

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
    fn manifest_and_client_config_are_actions() {
        let action = |a: &[&str]| choose(None, Env::default(), args(a)).map(|c| c.action);
        assert_eq!(action(&[]), Ok(Action::Serve));
        assert_eq!(action(&["--manifest"]), Ok(Action::Manifest));
        assert_eq!(action(&["--client-config"]), Ok(Action::ClientConfig));
        assert_eq!(
            action(&["--manifest", "--skills-dir", "s", "--manifest"]),
            Ok(Action::Manifest)
        );
        assert!(
            action(&["--manifest", "--client-config"])
                .unwrap_err()
                .contains("choose one")
        );
        // The transport stays parsed: --client-config prints the entry for it.
        let both = choose(
            None,
            Env::default(),
            args(&["--client-config", "--http", "127.0.0.1:8000"]),
        )
        .unwrap();
        assert_eq!(both.action, Action::ClientConfig);
        assert_eq!(both.transport, Transport::http("127.0.0.1:8000"));
        assert!(usage("s").contains("--manifest"));
        assert!(usage("s").contains("--client-config"));
    }

    #[test]
    fn request_state_keys_from_the_environment_are_checked() {
        let k1 = "00".repeat(32);
        let k2 = "Ab".repeat(40);
        assert_eq!(
            parse_state_keys(&format!(" {k1} ,{k2}")).unwrap(),
            [vec![0u8; 32], vec![0xab; 40]]
        );
        let secret = "5e".repeat(31);
        for (raw, says) in [
            (String::new(), "set but empty"),
            (" , ".to_owned(), "set but empty"),
            (format!("{k1},,{k2}"), "key 2 is empty"),
            (
                format!("{k1},{secret}"),
                "key 2 has 62 hex digits; each key needs at least 64",
            ),
            (format!("{}g", "0".repeat(64)), "key 1 is not hexadecimal"),
            (format!("0x{}", "0".repeat(64)), "key 1 is not hexadecimal"),
            ("0".repeat(65), "key 1 has an odd number of hex digits"),
        ] {
            let e = parse_state_keys(&raw).unwrap_err();
            assert!(e.contains(says), "{raw:?}: {e}");
            assert!(!e.contains(&secret), "an error must not echo a key: {e}");
        }
    }

    #[test]
    fn request_state_settings_name_their_variable() {
        let env = |keys: Option<&str>, audience: Option<&str>| {
            request_state_from_env(
                Server::builder(),
                keys.map(OsString::from),
                audience.map(OsString::from),
            )
            .map(|b| b.build())
        };
        let ok = "11".repeat(32);
        assert!(matches!(env(None, None), Ok(Ok(_))));
        assert!(matches!(env(Some(&ok), Some("fleet")), Ok(Ok(_))));
        let e = env(Some("abc"), None).err().unwrap();
        assert!(e.starts_with("MCP_REQUEST_STATE_KEYS: "), "{e}");
        let e = env(Some(&ok), Some("  ")).err().unwrap();
        assert!(e.starts_with("MCP_REQUEST_STATE_AUDIENCE: "), "{e}");
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStringExt as _;
            let bad = OsString::from_vec(vec![0xff; 64]);
            let e = request_state_from_env(Server::builder(), Some(bad), None)
                .err()
                .unwrap();
            assert!(e.starts_with("MCP_REQUEST_STATE_KEYS: "), "{e}");
        }
        assert!(usage("s").contains("MCP_REQUEST_STATE_KEYS"));
        assert!(usage("s").contains("MCP_REQUEST_STATE_AUDIENCE"));
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
