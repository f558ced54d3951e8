//! `new`: a crate with the quickstart's tools, `run!()` in `main`, a `TestClient` test and a
//! README, from the templates in `cargo-mcp/templates/`; `cargo test` passes in it at once.

use std::path::{Path, PathBuf};

use crate::Failure;
use crate::cli::NewArgs;

const CARGO_TOML: &str = include_str!("../../templates/Cargo.toml.in");
const MAIN_RS: &str = include_str!("../../templates/main.rs.in");
const TESTS_RS: &str = include_str!("../../templates/tests.rs.in");
const README: &str = include_str!("../../templates/README.md.in");
const GITIGNORE: &str = include_str!("../../templates/gitignore.in");

/// The address an `--http` server listens on.
const ADDR: &str = "127.0.0.1:8000";

const AUTH_TOOL: &str = r#"
/// Who is calling: the subject of the verified access token.
#[tool]
async fn whoami(who: mcp_runtime::auth::Principal) -> String {
    who.subject
}
"#;

const HTTP_NOTES: &str = "
The server serves Streamable HTTP on http://127.0.0.1:8000/mcp (`run!(\"127.0.0.1:8000\")` in
`src/main.rs`; `--stdio` on its command line serves stdio instead, as a desktop client that
starts it wants).
";

const AUTH_NOTES: &str = "
## Authorization

Built with mcp-runtime's `auth` feature: with `MCP_AUTH_ISSUER` (your authorization server) and
`MCP_AUTH_RESOURCE` (this server's URL, the audience its tokens must name) in its environment,
it answers only requests with a valid access token (`MCP_AUTH_SCOPES` lists the scopes every
token needs), and `whoami` tells who called:

```sh
MCP_AUTH_ISSUER=https://auth.example.com MCP_AUTH_RESOURCE=http://127.0.0.1:8000/mcp cargo run
cargo mcp call whoami --url http://127.0.0.1:8000/mcp --oauth   # logs in through the browser
```
";

pub(crate) fn run(a: NewArgs) -> Result<(), Failure> {
    if !valid_name(&a.name) {
        return Err(Failure::usage(format!(
            "{:?} is not a crate name: letters, digits, `-` and `_`, starting with a letter",
            a.name
        )));
    }
    let dir = a.dir.clone().unwrap_or_else(|| PathBuf::from(&a.name));
    if dir.exists() {
        return Err(Failure::new(format!("{} exists already", dir.display())));
    }
    let http = a.http || a.auth;
    let features = if a.auth {
        r#", features = ["auth"]"#
    } else {
        ""
    };
    let mcp_runtime = match &a.path {
        Some(checkout) => {
            let checkout = std::path::absolute(checkout)
                .map_err(|e| Failure::new(format!("{}: {e}", checkout.display())))?;
            if !checkout.join("mcp-runtime/Cargo.toml").is_file() {
                return Err(Failure::usage(format!(
                    "--path {}: no mcp-runtime/Cargo.toml there (give the checkout's root)",
                    checkout.display()
                )));
            }
            let path = checkout.join("mcp-runtime");
            format!(
                "mcp-runtime = {{ path = {:?}{features} }}",
                path.to_string_lossy()
            )
        }
        None => format!(r#"mcp-runtime = {{ version = "0.1"{features} }}"#),
    };
    let run = if http {
        format!("mcp_runtime::run!({ADDR:?});")
    } else {
        "mcp_runtime::run!();".to_owned()
    };
    let fill = |template: &str| {
        template
            .replace("{{name}}", &a.name)
            .replace("{{mcp_runtime}}", &mcp_runtime)
            .replace("{{run}}", &run)
            .replace("{{extra_tools}}", if a.auth { AUTH_TOOL } else { "" })
            .replace(
                "{{dev_http}}",
                if http { " (HTTP, 127.0.0.1:8000)" } else { "" },
            )
            .replace(
                "{{transport_notes}}",
                &match (http, a.auth) {
                    (_, true) => format!("{HTTP_NOTES}{AUTH_NOTES}"),
                    (true, false) => HTTP_NOTES.to_owned(),
                    _ => String::new(),
                },
            )
    };
    let files = [
        ("Cargo.toml", fill(CARGO_TOML)),
        ("src/main.rs", fill(MAIN_RS)),
        ("src/tests.rs", fill(TESTS_RS)),
        ("README.md", fill(README)),
        (".gitignore", fill(GITIGNORE)),
    ];
    for (file, text) in files {
        write(&dir.join(file), &text)?;
    }
    // A local checkout's Cargo.lock has the versions it was tested with: the new crate starts
    // from them (cargo drops what it does not use).
    if let Some(checkout) = &a.path {
        let lock = checkout.join("Cargo.lock");
        if lock.is_file() {
            std::fs::copy(&lock, dir.join("Cargo.lock"))
                .map_err(|e| Failure::new(format!("cannot copy {}: {e}", lock.display())))?;
        }
    }
    eprintln!(
        "Created {} in {}.\n\n  cd {}\n  cargo test\n  cargo mcp dev\n",
        a.name,
        dir.display(),
        dir.display()
    );
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<(), Failure> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| Failure::new(format!("cannot create {}: {e}", parent.display())))?;
    }
    std::fs::write(path, text)
        .map_err(|e| Failure::new(format!("cannot write {}: {e}", path.display())))
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    #[test]
    fn crate_names() {
        assert!(super::valid_name("weather-mcp"));
        assert!(!super::valid_name("1up"));
        assert!(!super::valid_name("a b"));
        assert!(!super::valid_name(""));
    }
}
