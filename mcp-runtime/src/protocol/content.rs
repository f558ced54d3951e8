//! Content blocks: what tools return and prompts contain.

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Who a piece of content is meant for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human user.
    User,
    /// The model.
    Assistant,
}

/// Hints to the client about how to use a piece of content.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the content is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (least) to 1 (most).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// ISO 8601 time of the last change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

/// The contents of a resource, embedded in a result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    Text {
        /// The resource URI.
        uri: String,
        /// The MIME type.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The text.
        text: String,
        /// `_meta` (for example an MCP App's `ui` settings, see [`apps`](crate::apps)).
        #[serde(rename = "_meta", default, skip_serializing_if = "Map::is_empty")]
        meta: Map<String, Value>,
    },
    /// Binary contents, base64-encoded.
    Blob {
        /// The resource URI.
        uri: String,
        /// The MIME type.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The base64-encoded bytes.
        blob: String,
        /// `_meta`.
        #[serde(rename = "_meta", default, skip_serializing_if = "Map::is_empty")]
        meta: Map<String, Value>,
    },
}

impl ResourceContents {
    /// Text contents for `uri`.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        ResourceContents::Text {
            uri: uri.into(),
            mime_type: None,
            text: text.into(),
            meta: Map::new(),
        }
    }

    /// Sets the MIME type.
    pub fn with_mime_type(mut self, value: impl Into<String>) -> Self {
        match &mut self {
            ResourceContents::Text { mime_type, .. } | ResourceContents::Blob { mime_type, .. } => {
                *mime_type = Some(value.into());
            }
        }
        self
    }

    /// Its `_meta`.
    pub fn meta(&self) -> &Map<String, Value> {
        match self {
            ResourceContents::Text { meta, .. } | ResourceContents::Blob { meta, .. } => meta,
        }
    }

    /// Its `_meta`, to change.
    pub fn meta_mut(&mut self) -> &mut Map<String, Value> {
        match self {
            ResourceContents::Text { meta, .. } | ResourceContents::Blob { meta, .. } => meta,
        }
    }

    /// Sets the `_meta` member `key`.
    pub fn with_meta(mut self, key: impl Into<String>, value: Value) -> Self {
        self.meta_mut().insert(key.into(), value);
        self
    }

    /// Binary contents for `uri`, base64-encoded here.
    pub fn blob(uri: impl Into<String>, bytes: &[u8], mime_type: impl Into<String>) -> Self {
        ResourceContents::Blob {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            blob: base64::engine::general_purpose::STANDARD.encode(bytes),
            meta: Map::new(),
        }
    }
}

/// One content block of a tool result or prompt message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Plain text.
    Text {
        /// The text.
        text: String,
        /// Optional hints.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// An image, base64-encoded.
    Image {
        /// The base64-encoded bytes.
        data: String,
        /// The MIME type, e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Optional hints.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// Audio, base64-encoded (2025-03-26 and later).
    Audio {
        /// The base64-encoded bytes.
        data: String,
        /// The MIME type, e.g. `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Optional hints.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// A link to a resource the client may read (2025-06-18 and later).
    ResourceLink {
        /// The resource URI.
        uri: String,
        /// A name for the resource.
        name: String,
        /// A description.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// The MIME type.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Optional hints.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// A resource embedded in the result.
    Resource {
        /// The contents.
        resource: ResourceContents,
        /// Optional hints.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text {
            text: text.into(),
            annotations: None,
        }
    }

    /// An image block from raw bytes (base64-encoded here).
    pub fn image(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: b64(bytes),
            mime_type: mime_type.into(),
            annotations: None,
        }
    }

    /// An audio block from raw bytes (base64-encoded here).
    pub fn audio(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: b64(bytes),
            mime_type: mime_type.into(),
            annotations: None,
        }
    }

    /// A link to a resource.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Content::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            description: None,
            mime_type: None,
            annotations: None,
        }
    }

    /// An embedded resource.
    pub fn resource(contents: ResourceContents) -> Self {
        Content::Resource {
            resource: contents,
            annotations: None,
        }
    }

    /// Sets the block's annotations.
    pub fn with_annotations(mut self, value: Annotations) -> Self {
        match &mut self {
            Content::Text { annotations, .. }
            | Content::Image { annotations, .. }
            | Content::Audio { annotations, .. }
            | Content::ResourceLink { annotations, .. }
            | Content::Resource { annotations, .. } => *annotations = Some(value),
        }
        self
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Content::text(text)
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Content::text(text)
    }
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Extra `_meta` members.
pub(crate) type Meta = Map<String, Value>;
