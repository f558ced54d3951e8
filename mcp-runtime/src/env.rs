//! Reading the `MCP_*` environment variables that configure a server: [`ServerBuilder::with_env`]
//! and [`HttpConfig::with_env`](crate::transport::HttpConfig::with_env). `run!()` calls both;
//! a program with its own `main` calls them to read the same variables the same way.
//!
//! A variable that is set but unusable is an error naming the variable, never a silent
//! fallback: a fleet whose instances disagree on a key or a host name fails in ways nothing in
//! the logs would explain.

use std::ffi::OsString;
use std::io;

use crate::ServerBuilder;

/// An `InvalidInput` error carrying `message` (which names the variable).
fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

impl ServerBuilder {
    /// Applies what the environment configures of a server, over what the code set:
    /// `MCP_REQUEST_STATE_KEYS` (comma-separated hex keys, each at least 64 hex digits; the
    /// first seals 2026-07-28 `requestState`, all open it: see
    /// [`ServerBuilder::request_state_keys`]) and `MCP_REQUEST_STATE_AUDIENCE` (the fleet's
    /// name in it, see [`ServerBuilder::request_state_audience`]).
    ///
    /// `run!()` calls this; a program with its own `main` calls it before
    /// [`build`](ServerBuilder::build):
    ///
    /// ```no_run
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let server = mcp_runtime::Server::builder().with_env()?.build()?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// A variable that is set but unusable (not hex, too short a key, empty), with a message
    /// that names the variable and never echoes a key.
    pub fn with_env(self) -> io::Result<Self> {
        request_state_from_env(
            self,
            std::env::var_os("MCP_REQUEST_STATE_KEYS"),
            std::env::var_os("MCP_REQUEST_STATE_AUDIENCE"),
        )
        .map_err(invalid)
    }
}

/// `MCP_REQUEST_STATE_KEYS` and `MCP_REQUEST_STATE_AUDIENCE`, when set, configure the
/// `requestState` key ring and audience. A value that is set but unusable is an error naming
/// the variable: falling back to a random key would break every multi-round request that
/// crosses instances, with nothing in the logs to say why.
fn request_state_from_env(
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

#[cfg(feature = "http")]
mod http_env {
    use std::io;
    use std::time::Duration;

    use super::invalid;
    use crate::transport::HttpConfig;
    use crate::transport::http::RouteToken;

    impl HttpConfig {
        /// Applies what the environment configures of an HTTP server, over what the code set:
        ///
        /// - `MCP_ALLOWED_ORIGINS=ORIGIN,...`: [`HttpConfig::with_allowed_origins`];
        /// - `MCP_ALLOWED_HOSTS=HOST,...`: [`HttpConfig::with_allowed_hosts`] (the `Host`
        ///   names a reverse proxy forwards);
        /// - `MCP_ROUTE_TOKEN=TOKEN`: [`HttpConfig::with_route_token`];
        /// - `MCP_DRAIN_DELAY=SECONDS`: [`HttpConfig::with_drain_delay`] (0 to 600, decimals
        ///   allowed);
        /// - `MCP_INSTANCE_HEADER=NAME`: [`HttpConfig::with_instance_header`];
        /// - `MCP_AUTH_ISSUER`, `MCP_AUTH_RESOURCE`, `MCP_AUTH_SCOPES` (with the `auth`
        ///   feature): [`HttpConfig::with_auth`].
        ///
        /// An unset or empty variable keeps the code's setting. `run!()` and
        /// [`Server::serve`](crate::Server::serve) call this; a program that calls
        /// [`serve_http`](crate::transport::serve_http) itself calls it too:
        ///
        /// ```no_run
        /// # async fn serve(server: mcp_runtime::Server) -> std::io::Result<()> {
        /// use mcp_runtime::transport::{HttpConfig, serve_http};
        /// serve_http(server, HttpConfig::new("0.0.0.0:8000").with_env()?).await
        /// # }
        /// ```
        ///
        /// # Errors
        ///
        /// A variable that is set but unusable, with a message that names it.
        pub fn with_env(self) -> io::Result<Self> {
            let mut config = self;
            if let Some(raw) = var("MCP_ALLOWED_ORIGINS")? {
                let origins = parse_origins(&raw)
                    .map_err(|e| invalid(format!("MCP_ALLOWED_ORIGINS: {e}")))?;
                config = config.with_allowed_origins(origins);
            }
            if let Some(raw) = var("MCP_ALLOWED_HOSTS")? {
                let hosts =
                    parse_hosts(&raw).map_err(|e| invalid(format!("MCP_ALLOWED_HOSTS: {e}")))?;
                config = config.with_allowed_hosts(hosts);
            }
            if let Some(token) = route_token(var("MCP_ROUTE_TOKEN")?.as_deref())? {
                config = config.with_route_token(token);
            }
            if let Some(raw) = var("MCP_DRAIN_DELAY")? {
                let delay = parse_drain_delay(&raw)
                    .map_err(|e| invalid(format!("MCP_DRAIN_DELAY: {e}")))?;
                config = config.with_drain_delay(delay);
            }
            if let Some(raw) = var("MCP_INSTANCE_HEADER")? {
                let name = http::HeaderValue::from_str(raw.trim()).map_err(|_| {
                    invalid(format!(
                        "MCP_INSTANCE_HEADER={raw:?}: not a header value (control characters)"
                    ))
                })?;
                config = config.with_instance_header(name);
            }
            with_env_auth(config)
        }
    }

    /// A variable's value, `None` when unset or blank; not UTF-8 is an error naming it.
    fn var(name: &str) -> io::Result<Option<String>> {
        match std::env::var(name) {
            Ok(value) if value.trim().is_empty() => Ok(None),
            Ok(value) => Ok(Some(value)),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => {
                Err(invalid(format!("{name}: not valid UTF-8")))
            }
        }
    }

    /// `MCP_ROUTE_TOKEN`, if set: a bad value is an error naming the variable.
    pub(super) fn route_token(raw: Option<&str>) -> io::Result<Option<RouteToken>> {
        raw.map(|raw| {
            RouteToken::new(raw).map_err(|e| invalid(format!("MCP_ROUTE_TOKEN={raw:?}: {e}")))
        })
        .transpose()
    }

    /// `MCP_AUTH_ISSUER` / `MCP_AUTH_RESOURCE` / `MCP_AUTH_SCOPES` make an HTTP server a
    /// resource server (HTTP only: a stdio server belongs to its client).
    fn with_env_auth(config: HttpConfig) -> io::Result<HttpConfig> {
        #[cfg(feature = "auth")]
        match crate::auth::Auth::from_env() {
            None => Ok(config),
            Some(Ok(auth)) => Ok(config.with_auth(auth)),
            Some(Err(e)) => Err(invalid(e.to_string())),
        }
        #[cfg(not(feature = "auth"))]
        Ok(config)
    }

    /// The longest drain delay `MCP_DRAIN_DELAY` may ask for: more is a typo, not a plan (an
    /// orchestrator kills the process long before).
    const MAX_DRAIN_DELAY_SECS: f64 = 600.0;

    /// `MCP_DRAIN_DELAY`'s value: seconds, a whole or decimal number from 0 to 600.
    pub(super) fn parse_drain_delay(raw: &str) -> Result<Duration, String> {
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
        Ok(Duration::from_secs_f64(secs))
    }

    /// `MCP_ALLOWED_ORIGINS`: comma-separated origins, each `http://` or `https://` and a host
    /// with an optional port, nothing after it (the `Origin` a browser sends is compared
    /// exactly, so anything else would never match).
    pub(super) fn parse_origins(raw: &str) -> Result<Vec<String>, String> {
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

    /// `MCP_ALLOWED_HOSTS`: comma-separated `Host` values, `name` or `name:port` (a URL or a
    /// path would never match a `Host` header, so it is an error rather than a dead entry).
    pub(super) fn parse_hosts(raw: &str) -> Result<Vec<String>, String> {
        raw.split(',')
            .map(str::trim)
            .filter(|h| !h.is_empty())
            .map(|host| {
                let bad = host.contains("://")
                    || host.bytes().any(|b| {
                        !(b.is_ascii_alphanumeric() || b"-.:[]_".contains(&b))
                    });
                if bad {
                    Err(format!(
                        "{host:?} is not a host name (give `name` or `name:port`, e.g. mcp.example.com)"
                    ))
                } else {
                    Ok(host.to_ascii_lowercase())
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Server;

    #[cfg(feature = "http")]
    #[test]
    fn route_tokens_from_the_environment_are_checked() {
        use http_env::route_token;
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
        use http_env::parse_origins;
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
    fn hosts_from_the_environment_are_checked() {
        use http_env::parse_hosts;
        assert_eq!(
            parse_hosts(" MCP.example.com, 127.0.0.1:8080 ,,[::1]:80").unwrap(),
            ["mcp.example.com", "127.0.0.1:8080", "[::1]:80"]
        );
        for bad in ["https://mcp.example.com", "mcp.example.com/mcp", "a b"] {
            let e = parse_hosts(bad).unwrap_err();
            assert!(e.contains("is not a host name"), "{bad}: {e}");
        }
    }

    #[cfg(feature = "http")]
    #[test]
    fn the_drain_delay_from_the_environment_is_checked() {
        use http_env::parse_drain_delay;
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
    }
}
