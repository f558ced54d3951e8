//! SSE answers: a request's notifications and then its result on one stream (numbered, recorded
//! and resumable in a session), and the keep-alive loop of long-lived streams.

use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use http::StatusCode;
use tokio::sync::mpsc;

use super::body::{self, HttpResponse};
use super::events::EventStore;
use super::sessions::Session;
use super::shared::Shared;
use crate::protocol::jsonrpc::Encoded;
use crate::request::Deliver;
use crate::request::Reply;
use crate::request::Sink;
use crate::server::connection::{Arrival, Pending, Step};

/// The SSE comment sent on a stream with nothing to say for the keep-alive interval.
const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// Runs a message and answers it: JSON when the handler sends nothing before its result, an SSE
/// stream (its notifications, then the result) when it does. In a session the handler runs as a
/// task of its own and the stream's events are kept for resumption; there the handler may also
/// end the stream early (`Context::close_stream`), and the client resumes it with a GET.
pub(crate) async fn respond(
    state: &Arc<Shared>,
    session: Option<&Arc<Session>>,
    headers: Arc<http::HeaderMap>,
    principal: Option<Arc<crate::auth::Principal>>,
    peer: std::net::IpAddr,
    status_of: fn(&Reply) -> StatusCode,
    run: impl FnOnce(Arrival) -> Step,
) -> HttpResponse {
    let notes = Arc::new(Notes::default());
    // JSON-only: the request gets no sink, so nothing can turn its answer into a stream.
    let sink = (!state.config.json_only).then(|| Sink::to(notes.clone()));
    // A stream can be ended early only where it can be resumed: recorded, with a priming event.
    let closer = (sink.is_some() && session.is_some_and(|s| s.primes()))
        .then(|| Arc::new(tokio::sync::Notify::new()));
    let arrival = Arrival {
        sink,
        headers: Some(headers),
        closer: closer.clone(),
        principal,
        peer: Some(peer),
    };
    let mut fut = match run(arrival) {
        Step::Reply(out) => return body::json(status_of(&out), out.bytes),
        Step::Nothing => return body::empty(StatusCode::ACCEPTED),
        Step::Run(fut) => fut,
    };
    // Most handlers finish on their first poll: polled here once, they need no task of their
    // own (a spawn, its wake-ups and join handle were a good part of a call's CPU).
    let first = std::future::poll_fn(|cx| std::task::Poll::Ready(fut.as_mut().poll(cx))).await;
    let mut result: Pending = match (first, session) {
        // Done, and nothing was sent before: the answer is JSON, and no channel was made.
        (std::task::Poll::Ready(out), _) if notes.close_if_quiet() => {
            return match out {
                Some(out) => body::json(status_of(&out), out.bytes),
                None => body::empty(StatusCode::ACCEPTED),
            };
        }
        (std::task::Poll::Ready(out), _) => Box::pin(std::future::ready(out)),
        // In a session the handler outlives a client that goes away (see below).
        (std::task::Poll::Pending, Some(_)) => Box::pin(OutlivesClient(Some(fut))),
        (std::task::Poll::Pending, None) => fut,
    };
    let mut notes = notes.receiver();
    enum Early {
        Note(Encoded),
        Done(Option<Reply>),
        Close,
    }
    let early = tokio::select! {
        biased;
        Some(note) = notes.recv() => Early::Note(note),
        out = &mut result => Early::Done(out),
        _ = or_never(closer.as_ref().map(|c| c.notified())) => Early::Close,
    };
    let (first, done, close_now) = match early {
        Early::Note(note) => (Some(note), None, false),
        // The result came first; a notification that raced it still goes first, on a stream.
        Early::Done(out) => match notes.try_recv() {
            Ok(note) => (Some(note), Some(out), false),
            Err(_) => {
                return match out {
                    Some(out) => body::json(status_of(&out), out.bytes),
                    None => body::empty(StatusCode::ACCEPTED),
                };
            }
        },
        Early::Close => (None, None, true),
    };
    let (tx, rx) = mpsc::channel(64);
    let mut events = stream_events(state, session);
    let keep_alive = state.config.sse_keep_alive;
    let in_session = session.is_some();
    let hold = session.map(Session::hold_stream);
    tokio::spawn(async move {
        let _hold = hold;
        // In a session a lost client is not a cancellation: the events are still recorded
        // for a resuming GET. Without one (2026-07-28), dropping `result` cancels the handler.
        // `None` once the stream is ended for the client to resume.
        let mut tx = Some(tx);
        let mut client = true;
        events.open().await;
        if let Some(priming) = events.priming() {
            deliver(&tx, priming, &mut client).await;
        }
        if let Some(first) = first {
            deliver(&tx, events.event(&first).await, &mut client).await;
        }
        if close_now {
            (tx, client) = (None, false);
        }
        let out = match done {
            Some(out) => out,
            None => loop {
                if !client && !in_session {
                    return;
                }
                tokio::select! {
                    biased;
                    Some(note) = notes.recv() => deliver(&tx, events.event(&note).await, &mut client).await,
                    out = &mut result => break out,
                    _ = or_never(tx.as_ref().map(|t| t.closed())), if client => client = false,
                    _ = or_never(closer.as_ref().map(|c| c.notified())), if client => {
                        (tx, client) = (None, false);
                    }
                    _ = tokio::time::sleep(keep_alive), if client => {
                        deliver(&tx, Bytes::from_static(KEEP_ALIVE), &mut client).await;
                    }
                }
            },
        };
        while let Ok(note) = notes.try_recv() {
            deliver(&tx, events.event(&note).await, &mut client).await;
        }
        if let Some(out) = out {
            deliver(&tx, events.event(&out.bytes).await, &mut client).await;
        }
        events.finish().await;
    });
    body::sse(rx)
}

/// A request's notifications on their way to its answer. The channel is made by the first one
/// (most requests send none and are answered with JSON without it), or when the answer has to
/// wait for the handler.
#[derive(Default)]
struct Notes(Mutex<NotesState>);

#[derive(Default)]
enum NotesState {
    /// No notification yet, and no channel.
    #[default]
    Quiet,
    /// The channel; its receiving end until the answer takes it.
    Open(mpsc::Sender<Encoded>, Option<mpsc::Receiver<Encoded>>),
    /// Answered with nothing sent: later notifications are refused, as by a dropped channel.
    Closed,
}

impl Notes {
    fn state(&self) -> std::sync::MutexGuard<'_, NotesState> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Bounded: a client that reads slowly loses notifications, never the server its memory.
    fn channel() -> (mpsc::Sender<Encoded>, mpsc::Receiver<Encoded>) {
        mpsc::channel(256)
    }

    /// Whether nothing was sent; if so, nothing will be.
    fn close_if_quiet(&self) -> bool {
        let mut state = self.state();
        let quiet = matches!(*state, NotesState::Quiet);
        if quiet {
            *state = NotesState::Closed;
        }
        quiet
    }

    /// The receiving end (the channel made now if nothing was sent yet). Taken once.
    fn receiver(&self) -> mpsc::Receiver<Encoded> {
        let mut state = self.state();
        match &mut *state {
            NotesState::Open(_, rx) => rx.take().expect("the receiver is taken once"),
            _ => {
                let (tx, rx) = Self::channel();
                *state = NotesState::Open(tx, None);
                rx
            }
        }
    }
}

impl Deliver for Notes {
    fn deliver(&self, message: Encoded) -> bool {
        let mut state = self.state();
        match &mut *state {
            NotesState::Open(tx, _) => tx.try_send(message).is_ok(),
            NotesState::Closed => false,
            NotesState::Quiet => {
                let (tx, rx) = Self::channel();
                let sent = tx.try_send(message).is_ok();
                *state = NotesState::Open(tx, Some(rx));
                sent
            }
        }
    }
}

/// A session-era handler that waits: polled by the request's own task while someone awaits
/// its result (no task of its own, and no hand-off between two tasks when it finishes), and
/// moved to a task of its own if it is dropped unfinished, as when the client goes away (in
/// the session era that is not a cancellation: the client sends `notifications/cancelled`).
struct OutlivesClient(Option<Pending>);

impl Future for OutlivesClient {
    type Output = Option<Reply>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let fut = self.0.as_mut().expect("polled after completion");
        let out = std::task::ready!(fut.as_mut().poll(cx));
        self.0 = None;
        std::task::Poll::Ready(out)
    }
}

impl Drop for OutlivesClient {
    fn drop(&mut self) {
        if let Some(fut) = self.0.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(fut);
        }
    }
}

/// Completes when `future` does; never when there is none.
async fn or_never(future: Option<impl Future<Output = ()>>) {
    match future {
        Some(future) => future.await,
        None => std::future::pending().await,
    }
}

/// Sends an event while the client is there; after it left, nothing (events are still recorded).
async fn deliver(tx: &Option<mpsc::Sender<Bytes>>, event: Bytes, client: &mut bool) {
    match tx {
        Some(tx) if *client => {
            if tx.send(event).await.is_err() {
                *client = false;
            }
        }
        _ => *client = false,
    }
}

/// Numbers and records the events of one SSE response (in a session), or just frames them.
/// Each event is in the store before the client can see it, so a client that saw it can
/// resume after it on any instance sharing the store.
struct StreamEvents {
    target: Option<Target>,
    retry: std::time::Duration,
}

struct Target {
    session: Arc<Session>,
    stream: u64,
    /// The seq of the last event numbered (0: the priming event).
    seq: u64,
    store: Arc<dyn EventStore>,
}

fn stream_events(state: &Arc<Shared>, session: Option<&Arc<Session>>) -> StreamEvents {
    let target = session.filter(|s| !s.is_ended()).map(|s| Target {
        session: s.clone(),
        stream: s.new_stream(),
        seq: 0,
        store: state.config.events.clone(),
    });
    StreamEvents {
        target,
        retry: state.config.sse_retry,
    }
}

impl StreamEvents {
    /// Starts the stream in the store; one the store cannot start is not recorded.
    async fn open(&mut self) {
        let Some(t) = &self.target else { return };
        if let Err(e) = t.store.open(&t.session.id, t.stream).await {
            tracing::warn!(session = %t.session.id, error = %e, "could not record an SSE stream: it cannot be resumed");
            self.target = None;
        }
    }

    /// The priming event (an id and a retry hint, no data), for resumable streams of clients
    /// at 2025-11-25 or later (older SDKs fail on an event with empty data).
    fn priming(&mut self) -> Option<Bytes> {
        let t = self.target.as_ref()?;
        t.session.priming(t.stream, 0, self.retry)
    }

    async fn event(&mut self, message: &[u8]) -> Bytes {
        // Once the session has ended, its events are no longer kept (nor numbered).
        if self.target.as_ref().is_some_and(|t| t.session.is_ended()) {
            self.target = None;
        }
        let Some(t) = &mut self.target else {
            return body::event(None, None, message);
        };
        t.seq += 1;
        let id = super::sessions::event_id(t.stream, t.seq);
        let event = body::event(Some(&id), None, message);
        if let Err(e) = t
            .store
            .append(&t.session.id, t.stream, t.seq, event.clone())
            .await
        {
            // Sent all the same: the client is there. A replay past it would have a gap, so
            // the store will not serve one.
            tracing::warn!(session = %t.session.id, error = %e, "could not record an SSE event");
        }
        event
    }

    async fn finish(&self) {
        if let Some(t) = &self.target
            && !t.session.is_ended()
            && let Err(e) = t.store.finish(&t.session.id, t.stream).await
        {
            tracing::warn!(session = %t.session.id, error = %e, "could not record the end of an SSE stream");
        }
    }
}

/// A sink writing notifications unrelated to any request (list changes, resource updates) to
/// a long-lived SSE stream, dropped when the stream is full or gone. It holds the stream weakly,
/// so it never keeps a stream open.
pub(crate) fn standalone_sink(tx: &mpsc::Sender<Bytes>, event: Option<&'static str>) -> Sink {
    let weak = tx.downgrade();
    Sink::new(move |message| {
        weak.upgrade()
            .is_some_and(|tx| tx.try_send(body::event(None, event, &message)).is_ok())
    })
}

/// Feeds a long-lived SSE stream of `session`: `first` (a priming event, or the legacy
/// transport's `endpoint` event), then keep-alive comments until the client goes away, the
/// session ends, or the server shuts down.
pub(crate) fn spawn_stream(
    state: &Arc<Shared>,
    tx: mpsc::Sender<Bytes>,
    session: &Arc<Session>,
    first: Option<Bytes>,
) {
    let keep_alive = state.config.sse_keep_alive;
    let mut shutdown = state.shutdown.clone();
    let mut ended = session.ended();
    let hold = session.hold_stream();
    tokio::spawn(async move {
        let _hold = hold;
        if let Some(first) = first
            && tx.send(first).await.is_err()
        {
            return;
        }
        loop {
            tokio::select! {
                _ = tokio::time::sleep(keep_alive) => {
                    if tx.send(Bytes::from_static(KEEP_ALIVE)).await.is_err() {
                        return;
                    }
                }
                _ = shutdown.changed() => return,
                // The session ended (or was dropped with its sender).
                _ = ended.changed() => return,
                _ = tx.closed() => return,
            }
        }
    });
}

/// Resumes `stream` of `session` for a client that saw its events up to `after`: a `retry`
/// hint, what the store kept since, then each new event as the store records it (keep-alive
/// comments while there is none), until the stream is finished (its result was sent), the
/// client leaves or the session ends.
pub(crate) fn resume(
    state: &Arc<Shared>,
    session: &Arc<Session>,
    stream: u64,
    mut after: u64,
    tx: mpsc::Sender<Bytes>,
) {
    let store = state.config.events.clone();
    let keep_alive = state.config.sse_keep_alive;
    // Only the retry hint: the client's `Last-Event-ID` is already the right cursor, and an
    // event id may not be sent twice in a session (nor can a fresh one name this position).
    let priming = session
        .primes()
        .then(|| Bytes::from(format!("retry: {}\n\n", state.config.sse_retry.as_millis())));
    let mut ended = session.ended();
    let hold = session.hold_stream();
    let session = session.clone();
    tokio::spawn(async move {
        let _hold = hold;
        if let Some(priming) = priming
            && tx.send(priming).await.is_err()
        {
            return;
        }
        loop {
            let replay = match store.replay(&session.id, stream, after).await {
                Ok(Some(replay)) => replay,
                // Forgotten (the session ended or the stream aged out).
                Ok(None) => return,
                Err(e) => {
                    tracing::warn!(session = %session.id, error = %e, "could not replay an SSE stream: ending it");
                    return;
                }
            };
            for event in replay.events {
                after = event.seq;
                if tx.send(event.bytes).await.is_err() {
                    return;
                }
            }
            if replay.finished {
                return;
            }
            // Quiet while the request runs: keep-alive comments keep proxies from closing it.
            let wait = store.wait(&session.id, stream, after);
            tokio::pin!(wait);
            loop {
                tokio::select! {
                    () = &mut wait => break,
                    _ = tx.closed() => return,
                    _ = ended.changed() => return,
                    _ = tokio::time::sleep(keep_alive) => {
                        if tx.send(Bytes::from_static(KEEP_ALIVE)).await.is_err() {
                            return;
                        }
                    }
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(text: &str) -> Encoded {
        text.as_bytes().to_vec()
    }

    #[test]
    fn a_quiet_request_makes_no_channel_and_refuses_late_notes() {
        let notes = Notes::default();
        assert!(notes.close_if_quiet());
        assert!(matches!(*notes.state(), NotesState::Closed));
        assert!(
            !notes.deliver(note("late")),
            "after a JSON answer, as a dropped channel"
        );
    }

    #[test]
    fn a_note_before_the_answer_opens_the_channel_and_is_read_first() {
        let notes = Notes::default();
        assert!(notes.deliver(note("progress")));
        assert!(!notes.close_if_quiet());
        let mut rx = notes.receiver();
        assert_eq!(&rx.try_recv().unwrap()[..], b"progress");
        assert!(notes.deliver(note("more")));
        assert_eq!(&rx.try_recv().unwrap()[..], b"more");
        drop(rx);
        assert!(!notes.deliver(note("gone")), "the stream is gone");
    }

    #[test]
    fn a_waiting_answer_takes_a_channel_notes_then_go_into() {
        let notes = Notes::default();
        let mut rx = notes.receiver();
        assert!(rx.try_recv().is_err());
        assert!(notes.deliver(note("later")));
        assert_eq!(&rx.try_recv().unwrap()[..], b"later");
    }
}
