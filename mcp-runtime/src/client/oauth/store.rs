//! Where tokens are kept between requests and between runs: [`TokenStore`], in memory by
//! default ([`MemoryTokenStore`]), or in a file only its owner can read ([`FileTokenStore`]).

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// The tokens an authorization server issued for one MCP server, and the client they were
/// issued to (a refresh token is only good with the client that got it).
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Tokens {
    /// The access token sent to the MCP server.
    pub access_token: String,
    /// `Bearer`, or `DPoP` for a token bound to a key.
    pub token_type: String,
    /// The refresh token, when one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires (seconds since the Unix epoch), when the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes granted (space-separated), when the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The issuer of the authorization server that issued them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// The client id they were issued to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// That client's secret, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// How that client authenticates at the token endpoint (`none`, `client_secret_basic`,
    /// `client_secret_post`, `private_key_jwt`), for refreshing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_auth_method: Option<String>,
}

impl Tokens {
    /// Whether the access token expires within `margin` seconds.
    pub(crate) fn expires_within(&self, margin: u64) -> bool {
        self.expires_at.is_some_and(|at| now() + margin >= at)
    }
}

/// Seconds since the Unix epoch.
pub(crate) fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl fmt::Debug for Tokens {
    /// Secrets are never printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tokens")
            .field("token_type", &self.token_type)
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "…"))
            .finish_non_exhaustive()
    }
}

/// Keeps [`Tokens`] by MCP server (the key is the server's URL as given to
/// [`connect`](crate::client::ClientBuilder::connect)). Implement it to keep them in a
/// keychain or a secrets service; a failure to save is logged and the tokens stay in memory
/// for the connection.
pub trait TokenStore: Send + Sync + 'static {
    /// The tokens kept for `server`, if any.
    fn load(&self, server: &str) -> Option<Tokens>;
    /// Keeps `tokens` for `server`, replacing what was there.
    fn save(&self, server: &str, tokens: &Tokens) -> std::io::Result<()>;
    /// Forgets the tokens of `server` (they were refused and could not be refreshed).
    fn clear(&self, server: &str) -> std::io::Result<()>;
}

/// Tokens in memory, for the life of the process (the default).
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    tokens: Mutex<HashMap<String, Tokens>>,
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl TokenStore for MemoryTokenStore {
    fn load(&self, server: &str) -> Option<Tokens> {
        self.tokens.lock().unwrap().get(server).cloned()
    }

    fn save(&self, server: &str, tokens: &Tokens) -> std::io::Result<()> {
        self.tokens
            .lock()
            .unwrap()
            .insert(server.to_owned(), tokens.clone());
        Ok(())
    }

    fn clear(&self, server: &str) -> std::io::Result<()> {
        self.tokens.lock().unwrap().remove(server);
        Ok(())
    }
}

/// Tokens in a JSON file, for a command-line tool that should not ask the user to log in on
/// every run. The file is created with mode 0600 (on Unix: readable and writable by its owner
/// only), and replaced whole on every save (written beside it, then renamed), so a crash
/// never leaves half a file.
#[derive(Debug)]
pub struct FileTokenStore {
    path: PathBuf,
    lock: Mutex<()>,
}

impl FileTokenStore {
    /// A store in `path` (created on the first save; its directory must exist).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileTokenStore {
            path: path.into(),
            lock: Mutex::new(()),
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> HashMap<String, Tokens> {
        std::fs::read(&self.path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    fn write(&self, all: &HashMap<String, Tokens>) -> std::io::Result<()> {
        let bytes = serde_json::to_vec_pretty(all).map_err(std::io::Error::other)?;
        let mut tmp = self.path.clone().into_os_string();
        tmp.push(format!(".{}.tmp", std::process::id()));
        let tmp = PathBuf::from(tmp);
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            options.mode(0o600);
        }
        let written = (|| {
            use std::io::Write as _;
            let mut file = options.open(&tmp)?;
            // A file left by an older run with wider permissions is narrowed too.
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt as _;
                file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
            }
            file.write_all(&bytes)?;
            file.sync_all()?;
            std::fs::rename(&tmp, &self.path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }
}

impl TokenStore for FileTokenStore {
    fn load(&self, server: &str) -> Option<Tokens> {
        let _guard = self.lock.lock().unwrap();
        self.read().remove(server)
    }

    fn save(&self, server: &str, tokens: &Tokens) -> std::io::Result<()> {
        let _guard = self.lock.lock().unwrap();
        let mut all = self.read();
        all.insert(server.to_owned(), tokens.clone());
        self.write(&all)
    }

    fn clear(&self, server: &str) -> std::io::Result<()> {
        let _guard = self.lock.lock().unwrap();
        let mut all = self.read();
        if all.remove(server).is_some() {
            self.write(&all)?;
        }
        Ok(())
    }
}
