//! A connected [`Client`] for the server the command line names: a command over stdio, a URL
//! (headers, OAuth), or the current package's binary (built first).

use std::path::PathBuf;
use std::time::Duration;

use mcp_runtime::ProtocolVersion;
use mcp_runtime::client::oauth::{FileTokenStore, LoopbackRedirect, OAuthConfig};
use mcp_runtime::client::{Client, ClientBuilder, ProtocolChoice, Stderr};

use crate::Failure;
use crate::args::words;
use crate::cli::ServerArgs;
use crate::package::{self, Profile};
use crate::terminal;

/// `--protocol`'s value.
pub(crate) fn protocol(choice: &str) -> Result<ProtocolChoice, Failure> {
    match choice {
        "auto" => Ok(ProtocolChoice::Auto),
        "stateless" => Ok(ProtocolChoice::Stateless),
        other => match ProtocolVersion::parse(other) {
            Some(ProtocolVersion::V2026_07_28) => Ok(ProtocolChoice::Stateless),
            Some(version) => Ok(ProtocolChoice::Session(version)),
            None => Err(Failure::usage(format!(
                "--protocol {other:?} is not a version this client speaks: auto, 2026-07-28, \
                 2025-11-25, 2025-06-18, 2025-03-26 or 2024-11-05"
            ))),
        },
    }
}

/// The cache directory of cargo-mcp (`$XDG_CACHE_HOME/cargo-mcp`, else `~/.cache/cargo-mcp`).
pub(crate) fn cache_dir() -> Result<PathBuf, Failure> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .ok_or_else(|| Failure::new("neither XDG_CACHE_HOME nor HOME is set"))?;
    Ok(base.join("cargo-mcp"))
}

fn builder(args: &ServerArgs) -> Result<ClientBuilder, Failure> {
    let timeout = Duration::from_secs(args.timeout.max(1));
    Ok(Client::builder()
        .info("cargo-mcp", env!("CARGO_PKG_VERSION"))
        .protocol(protocol(&args.protocol)?)
        .request_timeout(timeout)
        .connect_timeout(timeout)
        .on_elicitation(terminal::elicit)
        .url_elicitation(true)
        .on_sampling(terminal::sample))
}

/// Connects to the server `args` names.
pub(crate) async fn connect(args: &ServerArgs) -> Result<Client, Failure> {
    let mut builder = builder(args)?;
    if let Some(url) = &args.url {
        for header in &args.headers {
            let Some((name, value)) = header.split_once(':') else {
                return Err(Failure::usage(format!(
                    "--header {header:?} is not NAME:VALUE, e.g. \"Authorization: Bearer …\""
                )));
            };
            builder = builder.header(name.trim(), value.trim());
        }
        if args.oauth {
            builder = with_oauth(builder)?;
        }
        return builder
            .connect(url)
            .await
            .map_err(|e| Failure::new(format!("cannot connect to {url}: {e}")));
    }
    let command = match &args.stdio {
        Some(command) => words(command)?,
        None => {
            let binary = tokio::task::block_in_place(|| {
                package::build_or_fail(&args.package, Profile::Debug)
            })?;
            // `--stdio`: a `run!()` server whose code picks HTTP (`run!("ADDR")`) serves stdio.
            vec![binary.to_string_lossy().into_owned(), "--stdio".to_owned()]
        }
    };
    let mut cmd = tokio::process::Command::new(&command[0]);
    cmd.args(&command[1..]);
    // The server's log lines would bury the answer: kept, and quoted if it dies.
    builder
        .stderr(Stderr::Capture)
        .spawn(cmd)
        .await
        .map_err(|e| Failure::new(format!("cannot start the server {:?}: {e}", command[0])))
}

/// OAuth's authorization code flow: the login page printed for the user, the tokens kept
/// between runs in the cache directory (a file only its owner can read).
fn with_oauth(builder: ClientBuilder) -> Result<ClientBuilder, Failure> {
    let dir = cache_dir()?;
    std::fs::create_dir_all(&dir)
        .map_err(|e| Failure::new(format!("cannot create {}: {e}", dir.display())))?;
    let redirect = LoopbackRedirect::bind(|url| eprintln!("Log in at {url}"))
        .map_err(|e| Failure::new(format!("cannot listen for the OAuth redirect: {e}")))?;
    let login = Duration::from_secs(300);
    Ok(builder
        .oauth(
            OAuthConfig::authorization_code(redirect)
                .client_name("cargo-mcp")
                .token_store(FileTokenStore::new(dir.join("tokens.json"))),
        )
        .request_timeout(login)
        .connect_timeout(login))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_names() {
        assert_eq!(protocol("auto").ok(), Some(ProtocolChoice::Auto));
        assert_eq!(protocol("2026-07-28").ok(), Some(ProtocolChoice::Stateless));
        assert_eq!(
            protocol("2025-06-18").ok(),
            Some(ProtocolChoice::Session(ProtocolVersion::V2025_06_18))
        );
        assert!(protocol("2019").is_err());
    }
}
