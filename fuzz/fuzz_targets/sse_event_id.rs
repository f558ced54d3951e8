//! SSE resumption: the event ids a session hands out and how a GET's `Last-Event-ID` is read
//! (`transport/http/sessions/session.rs`), and the event store a resumed stream replays from
//! (`transport/http/events.rs::MemoryEventStore`), against a model, with two sessions.
//! Asserts: every id the session issued resumes its own stream after its own event; a
//! `Last-Event-ID` resumes only a stream the session opened; a replay holds only the events
//! of that session's stream, after the given one, in order, at most `per_stream`, the newest
//! ones, and says whether the stream finished; a replay from before an evicted event is
//! refused (`None`), never served with a gap; only `open` creates a session's entry, so
//! events for a session never opened or removed are not kept; a removed session replays
//! nothing; `wait` completes at once when a replay would show something new.
#![no_main]

#[path = "common/tools.rs"]
mod tools;

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::OnceLock;
use std::task::{Context, Poll, Waker};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mcp_runtime::Server;
use mcp_runtime::fuzzing::{Resume, SseSession};
use mcp_runtime::transport::http::{EventStore, EventStoreError, MemoryEventStore};

#[derive(Arbitrary, Debug)]
enum Op {
    NewStream,
    Event { stream: u8 },
    Open { other: bool, stream: u8 },
    Finish { other: bool, stream: u8 },
    Replay { other: bool, stream: u8, after: u8 },
    Resume { last_event_id: String },
    ResumeIssued { which: u8 },
    RemoveOther,
}

#[derive(Arbitrary, Debug)]
struct Input {
    per_stream: u8,
    ops: Vec<Op>,
}

#[derive(Default, Clone)]
struct Log {
    events: Vec<u64>,
    finished: bool,
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(tools::server)
}

/// The memory store answers at once: its futures are ready on their first poll.
fn now<T>(future: impl Future<Output = Result<T, EventStoreError>>) -> T {
    match std::pin::pin!(future).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(Ok(value)) => value,
        Poll::Ready(Err(e)) => panic!("the memory store failed: {e}"),
        Poll::Pending => panic!("the memory store did not answer at once"),
    }
}

fuzz_target!(|input: Input| {
    let per_stream = usize::from(input.per_stream).max(1);
    let store = MemoryEventStore::new(per_stream);
    let session = SseSession::new(server());
    let other = SseSession::new(server());
    let names = [session.id().to_owned(), other.id().to_owned()];
    assert_ne!(names[0], names[1], "two sessions with one id");
    // The model: (session, stream) -> events; streams beyond 32 per session age out (not
    // modelled: a replay of an aged-out stream may be `None`).
    let mut model: BTreeMap<(usize, u64), Log> = BTreeMap::new();
    // Whether each session has an entry in the store (only `open` makes one).
    let mut known = [false, false];
    // Stream ids carry a per-session random base in their high half; the first stream
    // tells it, and the store's stream arguments below are `base | n`.
    let first = session.new_stream();
    let base = first & !0xffff_ffff;
    assert_eq!(first & 0xffff_ffff, 0, "the first stream is number 0");
    let sid = |o: bool, stream: u8| {
        if o {
            u64::from(stream)
        } else {
            base | u64::from(stream)
        }
    };
    let mut opened = 1u64;
    let mut issued: Vec<(String, u64, u64)> = Vec::new();
    let mut other_seq = 0u64;
    for op in input.ops.iter().take(256) {
        match *op {
            Op::NewStream => {
                let s = session.new_stream();
                assert_eq!(s, base | opened, "stream ids are handed out in order");
                opened += 1;
            }
            Op::Event { stream } => {
                let stream = base | (u64::from(stream) % opened);
                let (id, seq) = session.event_id(stream);
                now(store.append(&names[0], stream, seq, id.clone().into_bytes().into()));
                if known[0] {
                    model.entry((0, stream)).or_default().events.push(seq);
                }
                issued.push((id, stream, seq));
            }
            Op::Open { other: o, stream } => {
                let stream = sid(o, stream);
                now(store.open(&names[usize::from(o)], stream));
                known[usize::from(o)] = true;
                model.entry((usize::from(o), stream)).or_default();
                if o {
                    other_seq += 1;
                    now(store.append(&names[1], stream, other_seq, "foreign".into()));
                    model.entry((1, stream)).or_default().events.push(other_seq);
                }
            }
            Op::Finish { other: o, stream } => {
                let stream = sid(o, stream);
                now(store.finish(&names[usize::from(o)], stream));
                if known[usize::from(o)] {
                    model.entry((usize::from(o), stream)).or_default().finished = true;
                }
            }
            Op::Replay {
                other: o,
                stream,
                after,
            } => {
                let (who, stream, after) = (usize::from(o), sid(o, stream), u64::from(after));
                let replay = now(store.replay(&names[who], stream, after));
                let streams_of = model.keys().filter(|(w, _)| *w == who).count();
                // The newest event evicted from the stream: a replay from before it has a gap.
                let evicted = model.get(&(who, stream)).and_then(|log| {
                    let gone = log.events.len().checked_sub(per_stream + 1)?;
                    Some(log.events[gone])
                });
                let gap = evicted.is_some_and(|gone| after < gone);
                match (replay, model.get(&(who, stream))) {
                    (Some(_), Some(_)) if gap => {
                        panic!("a replay with a gap: stream {stream} after {after}")
                    }
                    (Some(r), Some(log)) => {
                        let want: Vec<u64> = log
                            .events
                            .iter()
                            .rev()
                            .take(per_stream)
                            .rev()
                            .copied()
                            .filter(|s| *s > after)
                            .collect();
                        let got: Vec<u64> = r.events.iter().map(|e| e.seq).collect();
                        assert_eq!(got, want, "replay of stream {stream} after {after}");
                        assert_eq!(r.finished, log.finished, "finished flag of stream {stream}");
                        if who == 0 {
                            assert!(
                                r.events.iter().all(|e| e.bytes.as_ref() != b"foreign"),
                                "a foreign event replayed"
                            );
                        }
                        let wait = store.wait(&names[who], stream, after);
                        let ready = matches!(
                            std::pin::pin!(wait).poll(&mut Context::from_waker(Waker::noop())),
                            Poll::Ready(())
                        );
                        if !r.events.is_empty() || r.finished {
                            assert!(ready, "wait blocks although a replay shows something");
                        }
                    }
                    (Some(_), None) => panic!("replay of a stream never opened"),
                    (None, Some(_)) => {
                        assert!(gap || streams_of > 32, "a known stream replays nothing")
                    }
                    (None, None) => {}
                }
            }
            Op::Resume { ref last_event_id } => {
                if let Some(Resume { stream, .. }) = session.resume(last_event_id) {
                    assert!(
                        stream & !0xffff_ffff == base && (stream & 0xffff_ffff) < opened,
                        "resumed a stream the session never opened: {last_event_id:?}"
                    );
                }
            }
            Op::ResumeIssued { which } => {
                if let Some((id, stream, seq)) =
                    issued.get(usize::from(which) % issued.len().max(1))
                {
                    assert_eq!(
                        session.resume(id),
                        Some(Resume {
                            stream: *stream,
                            after: *seq
                        }),
                        "{id}"
                    );
                }
            }
            Op::RemoveOther => {
                now(store.remove_session(&names[1]));
                known[1] = false;
                model.retain(|(w, _), _| *w == 0);
                for s in 0..=255 {
                    assert!(
                        now(store.replay(&names[1], s, 0)).is_none(),
                        "a removed session replays"
                    );
                }
            }
        }
    }
});
