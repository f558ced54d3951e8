//! Write [Model Context Protocol](https://modelcontextprotocol.io) servers the way FastMCP does:
//! annotate plain functions, call one macro in `main`.
//!
//! ```no_run,standalone_crate
//! use mcp_runtime::prelude::*;
//!
//! /// Add two numbers.
//! #[tool]
//! async fn add(
//!     /// The first addend.
//!     a: i64,
//!     /// The second addend.
//!     b: i64,
//! ) -> i64 {
//!     a + b
//! }
//!
//! fn main() {
//!     mcp_runtime::run!(); // stdio; `--http ADDR` or MCP_TRANSPORT=ADDR switches transport
//! }
//! ```
//!
//! # Define
//!
//! [`#[tool]`](macro@tool) goes on a free `async fn` or plain `fn` (which runs on the blocking
//! pool). Each parameter becomes a property of the tool's input schema, described by its doc
//! comment; the fn's doc comment describes the tool. Parameters of type [`Context`] and
//! [`State<T>`](State) are injected and left out of the schema, and so is any [`FromContext`]
//! type marked `#[inject]` (an `Err` from it rejects the request). Argument types are anything `Deserialize + JsonSchema`:
//! `Option<T>` is optional, and `#[arg(default = …)]`, `#[arg(rename = "…")]` (or the
//! equivalent `#[serde(…)]`) adjust a parameter.
//!
//! Return values become results by their type ([`tool::ToolOutput`] and the module docs of
//! [`tool`](mod@tool) have the rules): text for strings, `structuredContent` with an `outputSchema` for
//! objects, numbers and lists, content blocks as they are, and `Err(e)` of a `Result` as an
//! `isError` result the model can read.
//!
//! `#[tool(task = "optional")]` lets a call run as a [task](mod@task) that outlives its request
//! (the client polls it), in both protocol eras.
//!
//! [`#[resource("scheme://path/{var}")]`](macro@resource) serves resources and RFC 6570
//! templates (variables bind to parameters by name), [`#[prompt]`](macro@prompt) serves prompts
//! (parameters are its arguments), and `complete(name = fn)` next to either answers
//! `completion/complete`. The README has a guide to each.
//!
//! # Register
//!
//! Nothing to do: the macros register the fn at link time. [`ServerBuilder::tool_filter`]
//! selects a subset.
//!
//! # Serve
//!
//! [`run!`] names the server after your Cargo package and serves stdio; one argument
//! (`run!("127.0.0.1:8000")`), the `--http ADDR` flag or `MCP_TRANSPORT` picks another transport.
//! One server answers both protocol eras: session clients (`initialize`, 2024-11-05 to
//! 2025-11-25) and stateless ones (2026-07-28, `server/discover` and `_meta` per request).
//!
//! # Test
//!
//! [`testing::TestClient`] calls your tools in-process, in either era.
//!
//! # Call
//!
//! With the `client` feature, `mcp_runtime::client` connects to any MCP server (spawned over
//! stdio, or over Streamable HTTP, `https://` with the `tls` feature), in either era, with
//! typed calls.
//!
//! # Public surface
//!
//! ## At the root
//!
//! What a server's own code names; [`prelude`] re-exports the most common of these with the
//! protocol types a tool returns.
//!
//! - [`tool`](macro@tool), [`resource`](macro@resource), [`prompt`](macro@prompt): the
//!   attributes that register a fn.
//! - [`run`]: builds the server from everything registered and serves it.
//! - [`Server`], [`ServerBuilder`], [`BuildError`]: a server built by hand, its settings, and
//!   why building it failed.
//! - [`CacheScope`]: who may reuse a cached result ([`ServerBuilder::cache_scope`]).
//! - [`Transport`]: stdio or an HTTP address.
//! - [`init_logging`]: `tracing` to stderr, for a `main` that does not use `run!`.
//! - [`Context`], [`State`], [`Principal`], [`FromContext`]: what a tool is handed besides its
//!   arguments (the first three by their names alone, any other [`FromContext`] type when marked
//!   `#[inject]`).
//! - [`McpError`], [`CallToolResult`], [`Content`], [`Json`]: what a tool returns.
//! - [`catalog`](fn@catalog): the handle on what the server offers: enables or disables
//!   registered items and announces changes, from anywhere in the program.
//! - [`ProtocolVersion`]: the protocol revisions, for tests and clients that pick one.
//!
//! ## Modules
//!
//! - [`apps`](mod@apps): MCP Apps, interactive HTML a host renders for a tool.
//! - [`ask`](mod@ask): asking the client (elicitation, sampling, roots).
//! - [`auth`](mod@auth): OAuth 2.1 bearer tokens and the [`Principal`] they name.
//! - [`catalog`](mod@catalog): enabling and disabling registered items at run time, list-changed
//!   and resource-updated announcements, the change bus of a fleet.
//! - `client` (feature `client`): a client for any MCP server, over stdio or HTTP.
//! - [`completion`](mod@completion): argument completion for prompts and resource templates.
//! - [`compose`](mod@compose): several servers served as one ([`ServerBuilder::mount`]).
//! - [`middleware`](mod@middleware): an ordered chain of hooks around the dispatcher.
//! - [`prompt`](mod@prompt): how a prompt's return value becomes messages.
//! - [`protocol`](mod@protocol): the MCP types on the wire, versions and error codes.
//! - [`registry`](mod@registry): what is registered, as the server describes it.
//! - [`request_state`](mod@request_state): the single-use guard of 2026-07-28 `requestState`.
//! - [`resource`](mod@resource): URI templates, resource contents, the path-traversal guard.
//! - [`schema`](mod@schema): the JSON Schemas tools publish, in the shape clients accept.
//! - [`task`](mod@task): tool calls that outlive their request, and where they are stored.
//! - [`testing`](mod@testing): [`TestClient`](testing::TestClient), in-process calls for tests.
//! - [`tool`](mod@tool): how a tool's return value becomes its result.
//! - [`transport`](mod@transport): stdio and Streamable HTTP.
//! - [`prelude`]: `use mcp_runtime::prelude::*;`.
//!
//! # Cargo features
//!
//! `stdio`, `http`, `macros` and `log` (records of the `log` crate reach the logger `run!()`
//! installs) are on by default (`default-features = false, features = ["stdio", "macros"]` is
//! a stdio-only server with no HTTP stack). Off by default: `client`, `tls` (`https://` for
//! the client and for `auth`: rustls, the platform's roots, HTTP/2 by ALPN),
//! `auth` (an OAuth 2.1 resource server), `tower` (`McpService` as a `tower_service::Service`),
//! `opentelemetry` (trace context from `_meta`), `skills` (agent skills from a directory: the
//! YAML parser for `SKILL.md`; without it a skills directory fails the build with an error
//! naming the feature) and `env-filter` (`RUST_LOG` with span and field filters; without it,
//! `target=level` directives and a level).
#![warn(missing_docs)]
// The dispatcher's pieces that only a transport calls (reply kinds, stream bookkeeping, header
// checks) are compiled in every build; a build without one of the transports leaves some unused.
#![cfg_attr(
    not(all(feature = "stdio", feature = "http")),
    allow(dead_code, unused_imports)
)]

pub mod apps;
pub mod ask;
pub mod auth;
pub mod catalog;
#[cfg(feature = "client")]
pub mod client;
pub mod completion;
pub mod compose;
mod desktop_config;
mod env;
// The one hyper client factory (the client's HTTP links, `auth`'s calls out), https:// with `tls`.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
#[cfg(any(all(feature = "client", feature = "http"), feature = "tls"))]
mod http_client;
mod id;
pub mod middleware;
pub mod prompt;
pub mod protocol;
pub mod registry;
mod request;
pub mod request_state;
pub mod resource;
mod runner;
pub mod schema;
mod server;
mod skills;
mod state;
pub mod task;
pub mod testing;
mod text_arg;
#[cfg(any(feature = "client", feature = "tls"))]
mod tls_failure;
pub mod tool;
pub mod transport;

// The crate root holds what a server's `main` and its tool fns name; everything else lives in
// its module (and the most common of those in the prelude). `tests/public_surface.rs` in this
// crate fails when the visible root grows past 20 names, and when the list in the crate docs
// drifts from this file.
pub use auth::Principal;
pub use catalog::catalog;
#[cfg(feature = "macros")]
pub use mcp_macros::{prompt, resource, tool};
pub use protocol::{CallToolResult, Content, McpError, ProtocolVersion};
pub use registry::BuildError;
pub use request::{Context, FromContext};
pub use runner::init_logging;
pub use server::{CacheScope, Server, ServerBuilder};
pub use state::State;
pub use tool::Json;
pub use transport::Transport;

// The root's former names, kept so code written against 0.1 still compiles; each lives in the
// module the docs point to (`mcp_runtime::protocol::Role`, `mcp_runtime::ask::Root`, …).
#[doc(hidden)]
pub use ask::{ElicitAction, Elicitation, ElicitationHandle, Root, SampledMessage, Sampling};
#[doc(hidden)]
#[allow(deprecated)]
pub use catalog::{Changes, changes};
#[doc(hidden)]
pub use completion::CompletionRequest;
/// The `http` crate, for [`Context::headers`].
#[doc(hidden)]
pub use http;
#[doc(hidden)]
#[allow(deprecated)]
pub use protocol::Era;
#[doc(hidden)]
pub use protocol::LogLevel;
#[doc(hidden)]
pub use protocol::{GetPromptResult, PromptMessage, Resource, ResourceContents, Role};
#[doc(hidden)]
pub use registry::ToolInfo;
#[doc(hidden)]
pub use resource::NotFound;

/// The 0.1 name of [`catalog`](mod@catalog).
#[doc(hidden)]
pub mod changes {
    pub use crate::catalog::{
        BusAlreadyAttached, BusInbound, BusMessage, ChangeBus, ChangeEvent, LocalBus,
    };
    #[allow(deprecated)]
    pub use crate::catalog::{Changes, Kind, changes};
}

/// The 0.1 home of [`Context`] and [`FromContext`], which are at the root.
#[doc(hidden)]
pub mod context {
    /// At the root: [`mcp_runtime::Context`](crate::Context).
    #[deprecated(note = "use `mcp_runtime::Context`")]
    pub type Context = crate::Context;
    // A trait cannot be a deprecated alias: the old path stays, hidden.
    pub use crate::FromContext;
}

/// The 0.1 home of [`LogLevel`](protocol::LogLevel), now in [`protocol`].
#[doc(hidden)]
pub mod outbound {
    /// Moved to [`protocol::LogLevel`](crate::protocol::LogLevel).
    #[deprecated(note = "moved to `mcp_runtime::protocol::LogLevel`")]
    pub type LogLevel = crate::protocol::LogLevel;
}

/// The names most servers need: `use mcp_runtime::prelude::*;`.
pub mod prelude {
    pub use crate::ask::{Elicitation, Sampling};
    pub use crate::completion::CompletionRequest;
    pub use crate::protocol::{
        CallToolResult, Content, GetPromptResult, PromptMessage, Resource, ResourceContents, Role,
    };
    pub use crate::resource::NotFound;
    pub use crate::tool::Json;
    pub use crate::{Context, McpError, State};
    #[cfg(feature = "macros")]
    pub use crate::{prompt, resource, tool};
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
}

/// Builds a server named after the calling package (`CARGO_PKG_NAME`, `CARGO_PKG_VERSION`) with
/// every registered tool, and serves it.
///
/// - `run!()` serves stdio.
/// - `run!(transport)` serves `transport` (anything `Into<Transport>`: `"stdio"` or an HTTP
///   address such as `"127.0.0.1:8000"`).
/// - `run!(state = value, …)` and `run!(transport, state = value, …)` also register shared
///   [`State`] values.
/// - `run!(skills_dir = "skills/")` serves the agent skills in a directory
///   ([`ServerBuilder::skills_dir`]). Each `key = value` calls the [`ServerBuilder`] method
///   of that name, so `state` may repeat and other one-argument settings work too.
///
/// At run time `MCP_TRANSPORT=stdio|ADDR` overrides the code, and `--stdio` / `--http ADDR` on
/// the command line override both; likewise `MCP_SKILLS_DIR=DIR` and `--skills-dir DIR`. On a
/// startup error it prints why and exits with status 2.
#[macro_export]
macro_rules! run {
    ($($key:ident = $value:expr),+ $(,)?) => {
        $crate::__private::run_main(
            $crate::__private::package_builder_with(
                ::core::env!("CARGO_PKG_NAME"),
                ::core::env!("CARGO_PKG_VERSION"),
                ::core::env!("CARGO_PKG_DESCRIPTION"),
                ::core::env!("CARGO_PKG_REPOSITORY"),
            )$(.$key($value))+,
            ::core::option::Option::None,
        )
    };
    ($transport:expr, $($key:ident = $value:expr),+ $(,)?) => {
        $crate::__private::run_main(
            $crate::__private::package_builder_with(
                ::core::env!("CARGO_PKG_NAME"),
                ::core::env!("CARGO_PKG_VERSION"),
                ::core::env!("CARGO_PKG_DESCRIPTION"),
                ::core::env!("CARGO_PKG_REPOSITORY"),
            )$(.$key($value))+,
            ::core::option::Option::Some(::core::convert::Into::<$crate::Transport>::into($transport)),
        )
    };
    () => {
        $crate::__private::run_main(
            $crate::__private::package_builder_with(
                ::core::env!("CARGO_PKG_NAME"),
                ::core::env!("CARGO_PKG_VERSION"),
                ::core::env!("CARGO_PKG_DESCRIPTION"),
                ::core::env!("CARGO_PKG_REPOSITORY"),
            ),
            ::core::option::Option::None,
        )
    };
    ($transport:expr $(,)?) => {
        $crate::__private::run_main(
            $crate::__private::package_builder_with(
                ::core::env!("CARGO_PKG_NAME"),
                ::core::env!("CARGO_PKG_VERSION"),
                ::core::env!("CARGO_PKG_DESCRIPTION"),
                ::core::env!("CARGO_PKG_REPOSITORY"),
            ),
            ::core::option::Option::Some(::core::convert::Into::<$crate::Transport>::into(
                $transport,
            )),
        )
    };
}

#[doc(hidden)]
pub mod __private {
    //! Used by the code the macros generate; not a public API.
    pub use crate::Context;
    pub use crate::FromContext;
    pub use crate::apps::{MIME_TYPE as APP_MIME_TYPE, UiResourceDef, UiToolDef};
    pub use crate::completion::CompleteFn;
    pub use crate::prompt::{
        PromptArgDef, PromptCall, PromptDef, PromptFuture, PromptReturnProbe, PromptViaOutput,
        PromptViaResult, PromptViaUnsupported,
    };
    pub use crate::protocol::Resource;
    pub use crate::protocol::{CallToolResult, McpError};
    pub use crate::resource::{
        ResourceAnnotationsDef, ResourceCall, ResourceDef, ResourceFuture, ResourceReturnProbe,
        ResourceViaOptionOutput, ResourceViaOptionSerde, ResourceViaOutput,
        ResourceViaResultOptionOutput, ResourceViaResultOptionSerde, ResourceViaResultOutput,
        ResourceViaResultSerde, ResourceViaSerde, ResourceViaUnsupported, not_found,
    };
    pub use crate::runner::run_main;
    pub use crate::schema::{SchemaDirection, schema_for};
    pub use crate::text_arg::{TextArgProbe, TextViaFromStr, TextViaOption, TextViaUnsupported};
    pub use crate::tool::output::{
        ToolReturnProbe, ToolViaMcpResultOutput, ToolViaMcpResultSerde, ToolViaOutput,
        ToolViaResultOutput, ToolViaResultSerde, ToolViaSerde, ToolViaUnsupported,
    };
    // The dispatch tables, one per kind of value: the only place each depth is written.
    pub use crate::task::TaskSupport;
    pub use crate::tool::{
        AnnotationsDef, IconDef, MetaValue, OutputSpec, ToolCall, ToolDef, ToolFuture,
        parse_arguments,
    };
    pub use crate::{
        __prompt_return as prompt_return, __resource_return as resource_return,
        __text_arg as text_arg, __tool_return as tool_return,
    };
    pub use inventory;
    pub use schemars;
    pub use serde;
    pub use serde_json;
    pub use tokio;

    /// The builder `run!()` starts from.
    pub fn package_builder(name: &str, version: &str, description: &str) -> crate::ServerBuilder {
        package_builder_with(name, version, description, "")
    }

    /// [`package_builder`] with the package's `repository` (empty when Cargo has none), which
    /// names the server card.
    pub fn package_builder_with(
        name: &str,
        version: &str,
        description: &str,
        repository: &str,
    ) -> crate::ServerBuilder {
        let builder = crate::Server::builder()
            .name(name)
            .version(version)
            .repository(repository)
            .catalog(crate::catalog());
        if description.trim().is_empty() {
            builder
        } else {
            builder.description(description)
        }
    }

    /// A bound that names the problem when a parameter the macro takes as an argument cannot be
    /// one. The words hold for every type that reaches it: an injected type written through an
    /// alias (`type Ctx = Context;`) reaches it too, since the macro only sees the alias's name.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a tool argument: it is not `Deserialize + JsonSchema`",
        label = "a parameter without `#[inject]` is an argument the client sends",
        note = "if the client sends it, derive `serde::Deserialize` and `schemars::JsonSchema` for it",
        note = "if the server supplies it, mark the parameter `#[inject]`: only `Context`, `State<T>` and `Principal` are injected without the marker, and only when written by those names (not through an alias such as `type Ctx = Context;`)"
    )]
    pub trait ToolArgument {}
    // Not recommended: one error naming `ToolArgument` rather than one per missing trait.
    #[diagnostic::do_not_recommend]
    impl<T: serde::de::DeserializeOwned + schemars::JsonSchema> ToolArgument for T {}

    /// Checked at each argument's type span by generated code: `true`, or a compile error in the
    /// words of [`ToolArgument`].
    pub const fn assert_argument<T: ToolArgument>() -> bool {
        true
    }

    /// The type of an argument's field in the generated struct: `<T as Argument<{
    /// assert_argument::<T>() }>>::Type`, which is `T`. When the check fails, the const is an
    /// error, so is the field's type, and rustc reports nothing more about it: the derives'
    /// `Deserialize` and `JsonSchema` obligations on the field would otherwise be four more
    /// errors for the one mistake.
    pub trait Argument<const CHECKED: bool> {
        /// `Self`.
        type Type: ?Sized;
    }
    impl<T: ?Sized, const CHECKED: bool> Argument<CHECKED> for T {
        type Type = T;
    }

    /// How generated code builds an injected parameter: through `FromContext`, under a name
    /// that says what is wrong when a marked type does not implement it.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be injected: it does not implement `FromContext`",
        label = "an injected parameter's type must implement `FromContext`",
        note = "implement `mcp_runtime::FromContext` for it, or remove `#[inject]` to take it from the client as an argument"
    )]
    pub trait Injected: Sized {
        /// `FromContext::from_context`.
        fn inject(ctx: &Context) -> Result<Self, McpError>;
    }
    // Not recommended: the error names `Injected` (in the words above), not `FromContext`.
    #[diagnostic::do_not_recommend]
    impl<T: FromContext> Injected for T {
        #[inline(always)]
        fn inject(ctx: &Context) -> Result<Self, McpError> {
            T::from_context(ctx)
        }
    }

    /// Runs a sync tool body on the blocking pool. The closure holds the request's context, so
    /// the request keeps its place in the connection's limit until the blocking work ends, even
    /// when the client cancels it.
    pub async fn run_blocking<T: Send + 'static>(
        ctx: &Context,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, McpError> {
        let held = ctx.clone();
        match tokio::task::spawn_blocking(move || {
            let _held = held;
            f()
        })
        .await
        {
            Ok(v) => Ok(v),
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => Err(McpError::internal("the tool's blocking task was cancelled")),
        }
    }
}

/// The crate README's examples (the page crates.io shows), compiled as doctests so they cannot
/// rot. The workspace README's are compiled by the root package (`src/lib.rs` there): that file
/// is not in this crate's package.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
