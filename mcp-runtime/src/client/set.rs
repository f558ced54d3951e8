//! Many servers at once: [`Clients`].

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use serde::Serialize;

use super::Client;
use super::builder::ClientBuilder;
use super::error::ClientError;
use super::servers_config::{ServerConfig, ServerTransport, ServersConfig};
use crate::protocol::{CallToolResult, Tool};

/// The clients of many servers, by name: every server of a [`ServersConfig`] started and
/// connected at once, each one's failure kept without stopping the others, their tools listed
/// as one list of namespaced names (`server.tool`), and a call routed by that name.
///
/// ```no_run
/// use mcp_runtime::client::{Client, Clients, ServersConfig};
/// use serde_json::json;
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let config = ServersConfig::read("claude_desktop_config.json")?;
/// let clients = Clients::connect(&config, Client::builder().info("my-host", "1.0.0")).await;
/// for failure in clients.failures() {
///     eprintln!("{} did not start: {}", failure.server, failure.error);
/// }
/// let listed = clients.list_tools().await;
/// for tool in &listed.tools {
///     println!("{}", tool.name); // "weather.forecast", "files.read_file", …
/// }
/// let result = clients.call_tool("weather.forecast", json!({"city": "Paris"})).await?;
/// println!("{}", result.text());
/// clients.close().await;
/// # Ok(())
/// # }
/// ```
///
/// Model APIs restrict tool names (OpenAI's and Anthropic's allow `[a-zA-Z0-9_-]` only): give
/// such a host another [`separator`](Clients::separator), such as `"__"`.
pub struct Clients {
    connected: Vec<(String, Client)>,
    failures: Vec<ServerFailure>,
    separator: String,
}

/// A server of the set that failed: to start or connect ([`Clients::failures`]), or to list
/// its tools ([`ListedTools::failures`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ServerFailure {
    /// The server's name in the file.
    pub server: String,
    /// What went wrong.
    pub error: ClientError,
}

/// [`Clients::list_tools`]: the tools of every server that listed them, and the servers that
/// could not.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ListedTools {
    /// Every server's tools, each named `server{separator}tool`, server after server in the
    /// config's order.
    pub tools: Vec<Tool>,
    /// The connected servers whose `tools/list` failed.
    pub failures: Vec<ServerFailure>,
}

impl Clients {
    /// Starts and connects every enabled server of `config` at once, each with a copy of
    /// `builder` (plus the entry's `headers`); waits until each is connected or has failed.
    /// A server that fails (a command that does not exist, a server that exits, a URL where
    /// nothing listens, a handshake past the builder's
    /// [`connect_timeout`](ClientBuilder::connect_timeout)) is in
    /// [`failures`](Self::failures); the others are connected regardless.
    pub async fn connect(config: &ServersConfig, builder: ClientBuilder) -> Clients {
        Clients::connect_with(config, |_| builder.clone()).await
    }

    /// [`connect`](Self::connect) with a builder of its own for each server (a handler, a
    /// timeout, [`Stderr`](super::Stderr) per server).
    pub async fn connect_with(
        config: &ServersConfig,
        mut builder: impl FnMut(&ServerConfig) -> ClientBuilder,
    ) -> Clients {
        let servers: Vec<&ServerConfig> = config.enabled().collect();
        let attempts = servers
            .iter()
            .map(|server| connect_one(server, builder(server)))
            .collect();
        let mut clients = Clients {
            connected: Vec::new(),
            failures: Vec::new(),
            separator: ".".into(),
        };
        for (server, outcome) in servers.into_iter().zip(join_all(attempts).await) {
            match outcome {
                Ok(client) => clients.connected.push((server.name.clone(), client)),
                Err(error) => {
                    tracing::warn!(server = %server.name, %error, "a server failed to connect");
                    clients.failures.push(ServerFailure {
                        server: server.name.clone(),
                        error,
                    });
                }
            }
        }
        clients
    }

    /// What joins a server's name to its tools' names (default `"."`: `weather.forecast`).
    /// A call is routed to the longest server name that, with the separator, begins the
    /// tool's name.
    pub fn separator(mut self, separator: impl Into<String>) -> Self {
        self.separator = separator.into();
        self
    }

    /// The client of server `name`, when it connected.
    pub fn get(&self, name: &str) -> Option<&Client> {
        self.connected
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, client)| client)
    }

    /// The connected servers, by name, in the config's order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Client)> {
        self.connected.iter().map(|(n, c)| (n.as_str(), c))
    }

    /// The servers that failed to start or connect, in the config's order.
    pub fn failures(&self) -> &[ServerFailure] {
        &self.failures
    }

    /// The name a server's tool goes by in the set: `server{separator}tool`.
    pub fn namespaced(&self, server: &str, tool: &str) -> String {
        format!("{server}{}{tool}", self.separator)
    }

    /// Which server a namespaced name is for, and the tool's own name: the longest server
    /// name (connected or failed) that the name begins with, followed by the separator.
    pub fn route<'a>(&self, namespaced: &'a str) -> Option<(&str, &'a str)> {
        let names = self
            .connected
            .iter()
            .map(|(n, _)| n.as_str())
            .chain(self.failures.iter().map(|f| f.server.as_str()));
        names
            .filter_map(|server| {
                let tool = namespaced
                    .strip_prefix(server)?
                    .strip_prefix(self.separator.as_str())?;
                Some((server, tool))
            })
            .max_by_key(|(server, _)| server.len())
    }

    /// Every connected server's tools, named `server{separator}tool`, listed at once. A server
    /// whose list fails is in [`ListedTools::failures`]; the others' tools are listed.
    pub async fn list_tools(&self) -> ListedTools {
        let lists = join_all(
            self.connected
                .iter()
                .map(|(_, client)| client.list_tools())
                .collect(),
        )
        .await;
        let mut listed = ListedTools::default();
        for ((server, _), list) in self.connected.iter().zip(lists) {
            match list {
                Ok(tools) => listed.tools.extend(tools.into_iter().map(|mut tool| {
                    tool.name = self.namespaced(server, &tool.name);
                    tool
                })),
                Err(error) => listed.failures.push(ServerFailure {
                    server: server.clone(),
                    error,
                }),
            }
        }
        listed
    }

    /// Calls the tool a namespaced name (`server{separator}tool`) stands for, on its server.
    /// A name that routes to no server is [`ClientError::UnknownServer`]; one that routes to
    /// a server that failed to connect returns that failure.
    pub async fn call_tool(
        &self,
        namespaced: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, ClientError> {
        let (client, tool) = self.client_for(namespaced)?;
        client.call_tool(tool, arguments).await
    }

    /// [`call_tool`](Self::call_tool), its result read as `T` as
    /// [`Client::call_tool_as`] does.
    pub async fn call_tool_as<T: serde::de::DeserializeOwned>(
        &self,
        namespaced: &str,
        arguments: impl Serialize,
    ) -> Result<T, ClientError> {
        let (client, tool) = self.client_for(namespaced)?;
        client.call_tool_as(tool, arguments).await
    }

    fn client_for<'a>(&self, namespaced: &'a str) -> Result<(&Client, &'a str), ClientError> {
        let Some((server, tool)) = self.route(namespaced) else {
            return Err(ClientError::UnknownServer(namespaced.to_owned()));
        };
        match self.get(server) {
            Some(client) => Ok((client, tool)),
            None => Err(self
                .failures
                .iter()
                .find(|f| f.server == server)
                .map(|f| f.error.clone())
                .unwrap_or(ClientError::Closed)),
        }
    }

    /// Closes every connection at once ([`Client::close`]).
    pub async fn close(&self) {
        join_all(self.connected.iter().map(|(_, c)| c.close()).collect()).await;
    }
}

/// Starts or connects one server.
async fn connect_one(server: &ServerConfig, builder: ClientBuilder) -> Result<Client, ClientError> {
    if let Some(child) = server.transport.command() {
        return builder.spawn(child).await;
    }
    #[cfg(feature = "http")]
    {
        let builder = server
            .transport
            .headers()
            .fold(builder, |b, (name, value)| b.header(name, value));
        match &server.transport {
            ServerTransport::Sse { url, .. } => builder.connect_sse(url).await,
            ServerTransport::Http { url, .. } => builder.connect(url).await,
            other => Err(ClientError::transport(format!(
                "unsupported transport {other:?}"
            ))),
        }
    }
    #[cfg(not(feature = "http"))]
    {
        let _ = builder;
        Err(ClientError::transport(
            "an HTTP server needs mcp-runtime's `http` feature",
        ))
    }
}

/// Runs `futures` at once on this task; their outputs in their order.
async fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut running: Vec<Option<Pin<Box<F>>>> =
        futures.into_iter().map(|f| Some(Box::pin(f))).collect();
    let mut outputs: Vec<Option<F::Output>> = running.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut waiting = false;
        for (slot, output) in running.iter_mut().zip(outputs.iter_mut()) {
            if let Some(future) = slot {
                match future.as_mut().poll(cx) {
                    Poll::Ready(out) => {
                        *output = Some(out);
                        *slot = None;
                    }
                    Poll::Pending => waiting = true,
                }
            }
        }
        if waiting {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}
