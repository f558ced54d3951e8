//! The wire protocol: a request's params decoded once by method, protocol versions and eras,
//! error codes and the MCP types a server sends, and the rules the client and the server must
//! agree on (the `x-mcp-header` annotations). The JSON-RPC envelope is the runtime's own
//! business (`jsonrpc`, crate-private).

pub(crate) mod apps;
pub(crate) mod asks;
pub mod content;
pub(crate) mod error;
pub(crate) mod form;
pub(crate) mod headers;
pub(crate) mod jsonrpc;
pub(crate) mod logging;
pub(crate) mod params;
pub mod types;
pub mod version;

pub use content::{Annotations, Content, ResourceContents, Role};
pub use error::{ErrorCode, McpError};
pub use jsonrpc::RequestId;
pub use logging::LogLevel;
pub use types::{
    CallToolResult, GetPromptResult, Icon, IconTheme, Implementation, Prompt, PromptArgument,
    PromptMessage, Resource, ResourceTemplate, Tool, ToolAnnotations,
};
#[allow(deprecated)]
pub use version::Era;
pub use version::{ProtocolEra, ProtocolVersion};
