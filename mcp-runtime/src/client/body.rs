//! Reading HTTP bodies from a server, bounded: an answer up to the message limit (more is
//! [`ClientError::TooLarge`]), an error's body up to 64 KiB (the rest is not read: the
//! connection is dropped with it). Their time is bounded by the request's deadline, which
//! covers the whole exchange.

use http::StatusCode;
use http::header::LOCATION;
use http_body_util::BodyExt;
use hyper::body::Incoming;

use super::error::ClientError;
use super::limits::MAX_ERROR_BODY;

/// Reads a whole body of at most `max` bytes.
pub(crate) async fn read_body(mut body: Incoming, max: usize) -> Result<Vec<u8>, ClientError> {
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| ClientError::failed("reading the answer", &e))?;
        if let Ok(data) = frame.into_data() {
            if out.len() + data.len() > max {
                return Err(ClientError::too_large("an HTTP answer's body (bytes)", max));
            }
            out.extend_from_slice(&data);
        }
    }
    Ok(out)
}

/// The first `max` bytes of a body (all of it when shorter); the rest is left unread.
pub(crate) async fn read_start(mut body: Incoming, max: usize) -> Vec<u8> {
    let mut out = Vec::new();
    while out.len() < max {
        let Some(Ok(frame)) = body.frame().await else {
            break;
        };
        if let Ok(data) = frame.into_data() {
            let room = max - out.len();
            out.extend_from_slice(&data[..data.len().min(room)]);
        }
    }
    out
}

/// A status that carries no JSON-RPC answer, as an error: the start of its body, or for a
/// redirect the `Location` this client did not follow (it sends its messages, and its
/// `Authorization` and other headers, to the URL it was given only).
pub(crate) async fn status_error(resp: hyper::Response<Incoming>) -> ClientError {
    let status = resp.status();
    if status.is_redirection() {
        let location = resp
            .headers()
            .get(LOCATION)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_default();
        return redirect(status, &location);
    }
    let body = read_start(resp.into_body(), MAX_ERROR_BODY).await;
    ClientError::Status {
        status: status.as_u16(),
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

fn redirect(status: StatusCode, location: &str) -> ClientError {
    ClientError::Status {
        status: status.as_u16(),
        body: format!(
            "a redirect to {:?}, not followed: this client sends its messages and headers \
             only to the URL it was given",
            crate::protocol::error::clip(location)
        ),
    }
}
