//! `/healthz` and `/readyz` for load balancers and orchestrators: answered before the Host,
//! Origin and authorization checks (a health check names no public host and carries no token),
//! so they say nothing but a status: a few plain-text bytes, no version, no counts.

use bytes::Bytes;
use http::header::{ALLOW, CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderValue, Method, Response, StatusCode};

use super::body::{Body, HttpResponse};
use super::shared::Shared;

/// Liveness: 200 while the process serves HTTP at all, draining included (an orchestrator
/// must not kill an instance for finishing its requests).
pub(crate) const HEALTH_PATH: &str = "/healthz";
/// Readiness: 200 while the instance takes new work, 503 from the shutdown signal on.
pub(crate) const READY_PATH: &str = "/readyz";

/// The answer to `path` if it is one of the two health paths (and not the MCP endpoint, which
/// wins if it was configured there), else `None`. Two length-checked comparisons on every
/// other request.
pub(crate) fn answer(state: &Shared, method: &Method, path: &str) -> Option<HttpResponse> {
    let ready = match path {
        HEALTH_PATH => true,
        READY_PATH => !state.draining.load(std::sync::atomic::Ordering::Relaxed),
        _ => return None,
    };
    if path == state.config.path {
        return None;
    }
    let (status, text) = match *method {
        Method::GET | Method::HEAD if ready => (StatusCode::OK, "ok\n"),
        Method::GET | Method::HEAD => (StatusCode::SERVICE_UNAVAILABLE, "draining\n"),
        _ => (StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n"),
    };
    // HEAD gets the headers only (hyper sends no body for it either way).
    let body = (*method != Method::HEAD).then(|| Bytes::from_static(text.as_bytes()));
    let mut r = Response::new(Body::full(body));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if status == StatusCode::METHOD_NOT_ALLOWED {
        h.insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
    }
    Some(r)
}
