//! Response bodies: a whole JSON document, nothing, or an SSE stream fed by a channel.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use tokio::sync::mpsc;

use super::client_limits::ClientSlot;
use super::idle::Active;
use crate::protocol::McpError;
use crate::protocol::jsonrpc::encode_error;

/// The body of every response this transport sends, with what it holds until it is sent or
/// dropped (its request's place among the connection's and the client's requests in
/// progress). Held in place: no box per response.
pub(crate) struct Body {
    content: Content,
    // Held for their drops.
    _slot: Option<ClientSlot>,
    _active: Option<Active>,
}

enum Content {
    Full(Option<Bytes>),
    Stream(mpsc::Receiver<Bytes>),
}

impl Body {
    /// A whole body (`None`: no body at all).
    pub(crate) fn full(bytes: Option<Bytes>) -> Body {
        Body::of(Content::Full(bytes))
    }

    /// A body fed by `rx` until its senders are gone.
    pub(crate) fn stream(rx: mpsc::Receiver<Bytes>) -> Body {
        Body::of(Content::Stream(rx))
    }

    fn of(content: Content) -> Body {
        Body {
            content,
            _slot: None,
            _active: None,
        }
    }

    /// This body, keeping its request counted among the connection's while it lives.
    pub(crate) fn holding(self, active: Active) -> Body {
        Body {
            _active: Some(active),
            ..self
        }
    }

    /// This body, keeping its request counted among its client's while it lives.
    pub(crate) fn holding_slot(self, slot: ClientSlot) -> Body {
        Body {
            _slot: Some(slot),
            ..self
        }
    }
}

impl HttpBody for Body {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.get_mut().content {
            Content::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Content::Stream(rx) => rx.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.content, Content::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match &self.content {
            Content::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            Content::Full(None) => SizeHint::with_exact(0),
            Content::Stream(_) => SizeHint::default(),
        }
    }
}

pub(crate) type HttpResponse = Response<Body>;

/// A JSON response.
pub(crate) fn json(status: StatusCode, bytes: Vec<u8>) -> HttpResponse {
    let mut r = Response::new(Body::full(Some(Bytes::from(bytes))));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// A JSON-RPC error with no id, as every 4xx/5xx of this transport carries.
pub(crate) fn error(status: StatusCode, error: McpError) -> HttpResponse {
    json(status, encode_error(None, &error))
}

/// 503 when every session is busy at the limit, with a `Retry-After` hint.
pub(crate) fn too_many_sessions(max: usize) -> HttpResponse {
    let mut r = error(
        StatusCode::SERVICE_UNAVAILABLE,
        McpError::internal(format!(
            "Too many sessions (limit {max}, all busy); try again later"
        )),
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    r
}

/// An empty response (202 for notifications, 200 for DELETE).
pub(crate) fn empty(status: StatusCode) -> HttpResponse {
    let mut r = Response::new(Body::full(None));
    *r.status_mut() = status;
    r
}

/// An SSE response fed by `rx`.
pub(crate) fn sse(rx: mpsc::Receiver<Bytes>) -> HttpResponse {
    let mut r = Response::new(Body::stream(rx));
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

/// One SSE event.
pub(crate) fn event(id: Option<&str>, name: Option<&str>, data: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(data.len() + 48);
    if let Some(id) = id {
        out.extend_from_slice(b"id: ");
        out.extend_from_slice(id.as_bytes());
        out.push(b'\n');
    }
    if let Some(name) = name {
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(name.as_bytes());
        out.push(b'\n');
    }
    // Our JSON never contains newlines; split anyway, as SSE requires.
    for line in data.split(|&b| b == b'\n') {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out.push(b'\n');
    Bytes::from(out)
}

/// The priming event of a resumable stream: its id and a `retry` hint, with empty data (the
/// client then knows where to resume from before any message arrived).
pub(crate) fn priming(id: &str, retry: std::time::Duration) -> Bytes {
    Bytes::from(format!(
        "id: {id}\nretry: {}\ndata: \n\n",
        retry.as_millis()
    ))
}
