//! The authorization server tests start: oidc-provider (tests/auth/as.mjs, installed pinned by
//! tests/auth/setup.sh with Node 22), on loopback.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use base64::Engine as _;
use serde_json::{Value, json};

use super::http::{Endpoint, Req};

/// The client-credentials client tests/auth/as.mjs registers.
pub const CLIENT: (&str, &str) = ("mcp-test", "test-secret");

/// The authorization server, a child process.
pub struct AuthServer {
    child: Child,
    pub issuer: String,
    pub port: u16,
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn node() -> &'static Path {
    static NODE: OnceLock<PathBuf> = OnceLock::new();
    NODE.get_or_init(|| {
        let out = Command::new("bash")
            .arg(Path::new(super::interop::ROOT).join("tests/auth/setup.sh"))
            .stderr(Stdio::inherit())
            .output()
            .expect("tests/auth/setup.sh runs");
        assert!(out.status.success(), "tests/auth/setup.sh failed");
        PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
    })
}

impl AuthServer {
    /// Starts oidc-provider on `port` (0: any) for tokens naming `resource`.
    pub fn start(resource: &str, port: u16) -> AuthServer {
        let script = Path::new(super::interop::ROOT).join(".interop/auth/as.mjs");
        let mut child = Command::new(node())
            .arg(&script)
            .env("PORT", port.to_string())
            .env("RESOURCE", resource)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node starts");
        let mut line = String::new();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        out.read_line(&mut line).unwrap();
        // It prints notices later: its stdout must stay open (a closed pipe would end it).
        std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
        let issuer = serde_json::from_str::<Value>(&line)
            .unwrap_or_else(|e| panic!("the authorization server said {line:?}: {e}"))["issuer"]
            .as_str()
            .unwrap()
            .to_owned();
        let port = issuer.rsplit(':').next().unwrap().parse().unwrap();
        AuthServer {
            child,
            issuer,
            port,
        }
    }

    /// A client-credentials token of `client` for `resource` with `scope`.
    pub fn token(&self, client: (&str, &str), resource: &str, scope: &str) -> String {
        let basic =
            base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", client.0, client.1));
        let enc = |s: &str| {
            s.replace(' ', "+")
                .replace('?', "%3F")
                .replace(':', "%3A")
                .replace('/', "%2F")
        };
        let form = format!(
            "grant_type=client_credentials&scope={}&resource={}",
            enc(scope),
            enc(resource)
        );
        let r = Endpoint { port: self.port }.send(
            &Req::post("/token")
                .header("Content-Type", "application/x-www-form-urlencoded")
                .header("Authorization", &format!("Basic {basic}"))
                .body(form),
        );
        assert_eq!(r.status(), 200, "token request: {r}");
        r.json()["access_token"].as_str().unwrap().to_owned()
    }
}

impl AuthServer {
    /// A token with `claims`, well signed by the issuer's real key (negative tests only).
    pub fn mint(&self, claims: Value, kid: Option<&str>) -> String {
        let r = Endpoint { port: self.port }
            .send(&Req::post("/test/mint").json(&json!({"claims": claims, "kid": kid})));
        assert_eq!(r.status(), 200, "{r}");
        r.json()["token"].as_str().unwrap().to_owned()
    }
}
