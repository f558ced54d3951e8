//! Configuring and connecting a [`Client`]: who it says it is, which era it speaks, what it
//! answers, and where the server is.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::Client;
use super::core::Core;
use super::error::ClientError;
use super::handlers::{ElicitRequest, ElicitResult, Handlers, ServerNotification};
use super::handshake::{ProtocolChoice, negotiate};
use super::limits::{Limits, within};
use super::router::{Inbox, spawn_router};
use super::stdio::{Stderr, StdioLink};
use crate::protocol::McpError;
#[cfg(feature = "http")]
use crate::protocol::ProtocolVersion;
use crate::protocol::asks::{Root, SampledMessage};

/// Builds a [`Client`]; [`Client::builder`] starts one.
///
/// Every setting is a by-value method named after the setting, with no prefix
/// (`.request_timeout(t)`, as tokio's, hyper's and reqwest's builders do, and as
/// [`ServerBuilder`](crate::ServerBuilder) and `HttpConfig` do too); a handler of what the
/// server sends is registered with an `on_*` method.
///
/// # Deadlines and limits
///
/// A server can be slow, broken or hostile; whatever it does, every call ends within a
/// deadline and the client's memory stays bounded. The defaults suit a server on the same
/// machine or a nearby network; each has a setting:
///
/// | setting | default | bounds |
/// |---|---|---|
/// | [`request_timeout`](Self::request_timeout) | 60 s | one request, as a whole: sending it (a stdio server that stops reading its stdin, an HTTP server that accepts the connection and never answers), the response head, the body, and the wait for the answer on a stream. Notifications and the client's answers to the server are sent within it too. |
/// | [`connect_timeout`](Self::connect_timeout) | 60 s | [`connect`](Self::connect), [`connect_sse`](Self::connect_sse) and [`spawn`](Self::spawn) as a whole: the probe, `initialize`, the fallback to HTTP+SSE; a spawned server's start-up (its handshake's requests wait as long as this, not `request_timeout`) |
/// | [`probe_timeout`](Self::probe_timeout) | 2 s | a stdio server's silence to `server/discover` before `initialize` is sent beside it ([`ProtocolChoice::Auto`]; not a deadline) |
/// | [`max_message_bytes`](Self::max_message_bytes) | 16 MiB | one message read: an HTTP body, an SSE event or line, a stdio line |
/// | [`max_list_items`](Self::max_list_items) | 100,000 | the items of one `list_*` call across its pages |
/// | [`max_list_bytes`](Self::max_list_bytes) | 32 MiB | the JSON of one `list_*` call's pages together |
/// | [`max_server_requests`](Self::max_server_requests) | 16 | elicitation, sampling and roots requests from the server answered at once; past it the server gets a JSON-RPC error at once |
///
/// Fixed bounds: an HTTP error's body is read up to 64 KiB (the rest is dropped with the
/// connection); a `list_*` call follows at most 10,000 pages and stops at any cursor the
/// server sent before; a 2026-07-28 call takes at most 16 `InputRequiredResult` rounds of at
/// most [`max_server_requests`](Self::max_server_requests) input requests each; the session's
/// `GET` stream has 10 s to open. Redirects are never followed, so neither `Authorization`
/// nor any [`header`](Self::header) reaches another origin (GHSA-9g45-5xwm-f3wc), and an
/// HTTP+SSE server's `endpoint` must be on the origin of its stream.
///
/// A deadline that passes is [`ClientError::Timeout`], a limit [`ClientError::TooLarge`];
/// a server that breaks the protocol (a cursor that loops) is [`ClientError::Protocol`].
#[must_use]
#[derive(Clone)]
pub struct ClientBuilder {
    name: String,
    version: String,
    protocol: ProtocolChoice,
    handlers: Handlers,
    limits: Limits,
    stderr: Stderr,
    #[cfg(feature = "http")]
    headers: Vec<(http::HeaderName, http::HeaderValue)>,
    bad_header: Option<String>,
    #[cfg(feature = "http")]
    tls: super::http::Tls,
    /// Why a root certificate given to the builder did not read (reported by `connect`).
    #[cfg(feature = "tls")]
    bad_root: Option<String>,
    renew_sessions: bool,
    #[cfg(feature = "http")]
    oauth: Option<super::oauth::OAuthConfig>,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            name: "mcp-runtime-client".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            protocol: ProtocolChoice::Auto,
            handlers: Handlers::default(),
            limits: Limits::default(),
            stderr: Stderr::Inherit,
            #[cfg(feature = "http")]
            headers: Vec::new(),
            bad_header: None,
            #[cfg(feature = "http")]
            tls: Default::default(),
            #[cfg(feature = "tls")]
            bad_root: None,
            renew_sessions: false,
            #[cfg(feature = "http")]
            oauth: None,
        }
    }
}

impl ClientBuilder {
    /// The client's name and version (`clientInfo`), e.g. `env!("CARGO_PKG_NAME")`.
    pub fn info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.name = name.into();
        self.version = version.into();
        self
    }

    /// The era to speak (default [`ProtocolChoice::Auto`]).
    pub fn protocol(mut self, protocol: ProtocolChoice) -> Self {
        self.protocol = protocol;
        self
    }

    /// How long one request may take as a whole, from its first byte sent to its answer
    /// (default 60 s): past it the request fails with [`ClientError::Timeout`] and is
    /// cancelled. Sending notifications and answers to the server is bounded by it too.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.limits.request_timeout = timeout;
        self
    }

    /// How long [`connect`](Self::connect), [`connect_sse`](Self::connect_sse) and
    /// [`spawn`](Self::spawn) may take as a whole, probe, handshake and fallback included
    /// (default 60 s; a stdio server that takes long to start, such as one `npx` fetches
    /// first, may need more: a spawned server's start-up counts against this, not against
    /// the [`request_timeout`](Self::request_timeout)). Past it they fail with
    /// [`ClientError::Timeout`].
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.limits.connect_timeout = timeout;
        self
    }

    /// How long [`ProtocolChoice::Auto`] waits for a stdio server to answer `server/discover`
    /// before it sends `initialize` beside it (default 2 s; servers that answer, even with an
    /// error, cost no wait). The probe's answer still counts after it, so this is no deadline:
    /// a server slower to start reaches the same era, as [`ProtocolChoice::Auto`] says.
    pub fn probe_timeout(mut self, timeout: Duration) -> Self {
        self.limits.probe_timeout = timeout;
        self
    }

    /// The largest message the client reads (default 16 MiB): an HTTP answer's body, one
    /// SSE event (or line), one line from a stdio server (its `\n` or `\r\n` not counted). A larger one fails what waits for
    /// it with [`ClientError::TooLarge`]; a stream or stdio connection that carried it ends.
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.limits.max_message_bytes = bytes;
        self
    }

    /// Keeps the answers of the `list_*` calls and [`discover`](super::Client::discover) for
    /// as long as their 2026-07-28 cache hints allow (`ttlMs`; default off): asked again
    /// within it, they are answered from memory, without a request. A
    /// `notifications/tools/list_changed` (prompts, resources alike) drops the lists it names
    /// at once, so the next call fetches them again; resources also drop `skills/list`.
    /// Results without hints (the session era) and `ttlMs: 0` are never kept. The
    /// notifications reach the client on a session's stream or a
    /// [`listen`](super::Client::listen) stream (2026-07-28), so a 2026-07-28 host that caches
    /// listens for the changes it cares about.
    pub fn cache(mut self, on: bool) -> Self {
        self.limits.cache = on;
        self
    }

    /// The most items one `list_*` call collects across its pages (default 100,000): more
    /// is [`ClientError::TooLarge`].
    pub fn max_list_items(mut self, items: usize) -> Self {
        self.limits.max_list_items = items;
        self
    }

    /// The most bytes of JSON one `list_*` call reads across its pages (default 32 MiB):
    /// more is [`ClientError::TooLarge`].
    pub fn max_list_bytes(mut self, bytes: usize) -> Self {
        self.limits.max_list_bytes = bytes;
        self
    }

    /// How many requests from the server (elicitation, sampling, roots, ping) are answered at
    /// once (default 16); the server's requests past it are refused at once with a JSON-RPC
    /// error (-32603), never queued. Also the most input requests one 2026-07-28
    /// `InputRequiredResult` may carry.
    pub fn max_server_requests(mut self, requests: usize) -> Self {
        self.limits.max_server_requests = requests.max(1);
        self
    }

    /// What happens to a spawned server's stderr (default: passed through).
    pub fn stderr(mut self, stderr: Stderr) -> Self {
        self.stderr = stderr;
        self
    }

    /// A header sent with every HTTP request (e.g. `Authorization`). An invalid name or
    /// value fails [`connect`](Self::connect).
    #[cfg(feature = "http")]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        match (
            http::HeaderName::try_from(name),
            http::HeaderValue::try_from(value),
        ) {
            (Ok(n), Ok(v)) => self.headers.push((n, v)),
            _ => self.bad_header = Some(name.to_owned()),
        }
        self
    }

    /// Also trusts the certificate authority `cert` for `https://` servers, besides the
    /// platform's trust roots (see [`trust_platform_roots`](Self::trust_platform_roots)):
    /// a private CA, a corporate proxy's, a test's. The MCP server's OAuth authorization server
    /// (with [`oauth`](Self::oauth)) is reached under the same roots. `cert` is PEM (every `CERTIFICATE` block
    /// in it: a CA bundle is fine) or one DER certificate; one that does not read fails
    /// [`connect`](Self::connect). Call it once per root. Ignored once
    /// [`tls_config`](Self::tls_config) is given.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let ca = std::fs::read("internal-ca.pem")?;
    /// let client = mcp_runtime::client::Client::builder()
    ///     .add_root_certificate(ca)
    ///     .connect("https://mcp.internal.example/mcp")
    ///     .await?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "tls")]
    pub fn add_root_certificate(mut self, cert: impl AsRef<[u8]>) -> Self {
        if let Err(why) = self.tls.add_root(cert.as_ref()) {
            self.bad_root.get_or_insert(why);
        }
        self
    }

    /// Whether `https://` servers' certificates may chain to the platform's trust roots (the
    /// system's CA store, read once per process, as hyper-rustls's `native-tokio` does;
    /// `SSL_CERT_FILE` and `SSL_CERT_DIR` are honoured). Default on; off, only the roots
    /// given with [`add_root_certificate`](Self::add_root_certificate) are trusted (a client
    /// that talks only to servers of a private CA). Ignored once
    /// [`tls_config`](Self::tls_config) is given.
    #[cfg(feature = "tls")]
    pub fn trust_platform_roots(mut self, on: bool) -> Self {
        self.tls.platform_roots = on;
        self
    }

    /// The whole TLS configuration for `https://`, instead of the one the client makes: your
    /// own verifier, client certificates (mutual TLS), another crypto provider, pinned
    /// protocol versions. Its ALPN list is replaced with `h2` and `http/1.1` (HTTP/2 is used
    /// when the server picks it). [`add_root_certificate`](Self::add_root_certificate) and
    /// [`trust_platform_roots`](Self::trust_platform_roots) no longer apply.
    ///
    /// The type is rustls 0.23's, re-exported as [`mcp_runtime::client::rustls`](super::rustls)
    /// so that the version always matches: a rustls release with a new major version reaches
    /// this API only in a breaking release of mcp-runtime.
    #[cfg(feature = "tls")]
    pub fn tls_config(mut self, config: impl Into<Arc<rustls::ClientConfig>>) -> Self {
        self.tls.config = Some(config.into());
        self
    }

    /// OAuth 2.1 for an HTTP server that asks for it: on a 401 the client discovers the
    /// server's authorization server, registers, gets a token by `config`'s grant and sends
    /// the request again (see [`oauth`](super::oauth)). The token goes to this server only.
    #[cfg(feature = "http")]
    pub fn oauth(mut self, config: super::oauth::OAuthConfig) -> Self {
        self.oauth = Some(config);
        self
    }

    /// When the server forgets the HTTP session (404), start a new one and send the request
    /// again, instead of failing with [`ClientError::SessionExpired`].
    pub fn renew_sessions(mut self, on: bool) -> Self {
        self.renew_sessions = on;
        self
    }

    /// Answers the server's elicitation (form, and URL when
    /// [`url_elicitation`](Self::url_elicitation) is on) and declares the capability. In the
    /// session era it answers `elicitation/create` requests; in 2026-07-28 the same handler
    /// answers `InputRequiredResult` rounds.
    pub fn on_elicitation<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ElicitRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, McpError>> + Send + 'static,
    {
        self.handlers.set_elicit(handler);
        self
    }

    /// Also declares URL-mode elicitation (the handler then gets URL requests too).
    pub fn url_elicitation(mut self, on: bool) -> Self {
        self.handlers.url_elicitation = on;
        self
    }

    /// Answers the server's sampling requests (`sampling/createMessage` params in, the
    /// model's message out) and declares the capability.
    pub fn on_sampling<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<SampledMessage, McpError>> + Send + 'static,
    {
        self.handlers.set_sample(handler);
        self
    }

    /// Answers `roots/list` with what `f` gives at the time and declares the capability.
    pub(crate) fn on_roots<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Root>, McpError>> + Send + 'static,
    {
        self.handlers.set_roots(f);
        self
    }

    /// Answers `roots/list` with these roots and declares the capability.
    pub fn roots(mut self, roots: Vec<Root>) -> Self {
        self.handlers.set_roots(move || {
            let roots = roots.clone();
            async move { Ok(roots) }
        });
        self
    }

    /// Calls `f` for every notification the server sends (progress, logs, changes).
    /// [`Client::notifications`] is the same as a stream.
    pub fn on_notification(
        mut self,
        f: impl Fn(&ServerNotification) + Send + Sync + 'static,
    ) -> Self {
        self.handlers.notify.push(std::sync::Arc::new(f));
        self
    }

    fn client_info(&self) -> Value {
        json!({"name": self.name, "version": self.version})
    }

    /// Starts `command` as a stdio server and connects to it. The child is ended when the
    /// client is closed or dropped.
    pub async fn spawn(
        self,
        command: impl Into<tokio::process::Command>,
    ) -> Result<Client, ClientError> {
        let (inbox, rx) = Inbox::new();
        let link = StdioLink::spawn(command.into(), self.stderr, &self.limits, inbox.clone())?;
        let stderr = link.stderr.clone();
        let client = self.client(Box::new(link), &inbox, rx, Some(stderr));
        let probe = Some(self.limits.probe_timeout);
        // A child that never answers is ended when `client` drops.
        within(
            self.limits.connect_timeout,
            negotiate(&client.core, self.protocol, probe),
        )
        .await?;
        Ok(client)
    }

    /// Connects to a Streamable HTTP endpoint (`http://host:port/mcp`, or `https://` with the
    /// `tls` feature). A server that refuses the `POST`s with 400, 404 or 405 and no JSON-RPC
    /// answer is tried as a deprecated HTTP+SSE server at the same URL (as the spec's
    /// backward-compatibility rules say), unless the builder asked for
    /// [`ProtocolChoice::Stateless`]. A certificate that is refused is [`ClientError::Tls`],
    /// which says why.
    #[cfg(feature = "http")]
    pub async fn connect(mut self, url: &str) -> Result<Client, ClientError> {
        self.check_headers()?;
        let uri = super::http::parse_url(url)?;
        let auth = self.authorizer(&uri, url);
        within(self.limits.connect_timeout, self.connect_to(uri, url, auth)).await
    }

    /// The authorizer of the server at `uri` (its tokens are kept under `url`).
    #[cfg(feature = "http")]
    fn authorizer(&mut self, uri: &http::Uri, url: &str) -> Option<Arc<super::oauth::Authorizer>> {
        let config = self.oauth.take()?;
        Some(Arc::new(super::oauth::Authorizer::new(
            config,
            super::oauth::Fetch::new(super::http::authorization_client(&self.tls)),
            uri.clone(),
            url.to_owned(),
        )))
    }

    #[cfg(feature = "http")]
    async fn connect_to(
        &self,
        uri: http::Uri,
        url: &str,
        auth: Option<Arc<super::oauth::Authorizer>>,
    ) -> Result<Client, ClientError> {
        let hyper = super::http::hyper_client(&uri, &self.tls)?;
        let (inbox, rx) = Inbox::new();
        let link = super::http::HttpLink::new(
            hyper.clone(),
            uri.clone(),
            self.headers.clone(),
            auth.clone(),
            &self.limits,
            inbox.clone(),
        );
        let client = self.client(Box::new(link), &inbox, rx, None);
        match negotiate(&client.core, self.protocol, None).await {
            Ok(()) => Ok(client),
            Err(ClientError::Status {
                status: 400 | 404 | 405,
                ..
            }) if self.protocol != ProtocolChoice::Stateless => {
                client.core.close().await;
                tracing::debug!("{url} refused Streamable HTTP; trying HTTP+SSE");
                self.open_sse(hyper, uri, auth).await
            }
            Err(e) => Err(e),
        }
    }

    /// Connects to a deprecated HTTP+SSE server (2024-11-05): `url` is its SSE endpoint
    /// (often `/sse`). [`connect`](Self::connect) falls back to this by itself.
    #[cfg(feature = "http")]
    pub async fn connect_sse(mut self, url: &str) -> Result<Client, ClientError> {
        self.check_headers()?;
        let uri = super::http::parse_url(url)?;
        let hyper = super::http::hyper_client(&uri, &self.tls)?;
        let auth = self.authorizer(&uri, url);
        within(self.limits.connect_timeout, self.open_sse(hyper, uri, auth)).await
    }

    #[cfg(feature = "http")]
    async fn open_sse(
        &self,
        hyper: super::http::Hyper,
        uri: http::Uri,
        auth: Option<Arc<super::oauth::Authorizer>>,
    ) -> Result<Client, ClientError> {
        let version = match self.protocol {
            ProtocolChoice::Session(v) => v,
            ProtocolChoice::Stateless => {
                return Err(ClientError::protocol(
                    "HTTP+SSE servers speak the session era only",
                ));
            }
            ProtocolChoice::Auto => ProtocolVersion::LATEST_SESSION,
        };
        let (inbox, rx) = Inbox::new();
        let link = super::legacy::LegacyLink::open(
            hyper,
            uri,
            self.headers.clone(),
            auth,
            &self.limits,
            inbox.clone(),
        )
        .await?;
        let client = self.client(Box::new(link), &inbox, rx, None);
        negotiate(&client.core, ProtocolChoice::Session(version), None).await?;
        Ok(client)
    }

    #[cfg(feature = "http")]
    fn check_headers(&self) -> Result<(), ClientError> {
        #[cfg(feature = "tls")]
        if let Some(why) = &self.bad_root {
            return Err(ClientError::transport(format!(
                "add_root_certificate: {why}"
            )));
        }
        match &self.bad_header {
            Some(name) => Err(ClientError::transport(format!(
                "header {name:?} has an invalid name or value"
            ))),
            None => Ok(()),
        }
    }

    fn client(
        &self,
        link: Box<dyn super::core::Link>,
        inbox: &Inbox,
        rx: mpsc::Receiver<super::core::Inbound>,
        stderr: Option<std::sync::Arc<std::sync::Mutex<std::collections::VecDeque<u8>>>>,
    ) -> Client {
        let (core, refusals) =
            Core::new(link, self.handlers.clone(), self.client_info(), self.limits);
        spawn_router(Arc::downgrade(&core), rx, refusals);
        inbox.attach(&core);
        Client {
            core,
            stderr,
            renew: self.renew_sessions,
        }
    }
}
