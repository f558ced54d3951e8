//! The control client: while a scenario abuses the server, it calls `tools/call add` every
//! 200 ms on a new connection (so a full accept queue or a starved runtime shows too) and
//! records how long each answer took. A probe not answered within 5 s is a failure.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

use crate::client::{ADD_RESULT, Conn, add_call, stateless_call, stateless_headers};

const EVERY: Duration = Duration::from_millis(200);
const LIMIT: Duration = Duration::from_secs(5);

/// A running control client.
pub struct Probe {
    stop: Arc<AtomicBool>,
    task: JoinHandle<Vec<Option<Duration>>>,
}

/// What the control client saw.
pub struct ProbeReport {
    pub ok: Vec<Duration>,
    pub failed: usize,
}

impl Probe {
    /// Starts probing: in a session of its own (opened now), or statelessly (2026-07-28) when
    /// the scenario is about stateless requests.
    pub async fn start(port: u16, stateless: bool) -> Probe {
        let session = if stateless {
            None
        } else {
            let mut conn = Conn::open(port).await.expect("control connects");
            conn.initialize().await.expect("control session");
            conn.session
        };
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let task = tokio::spawn(async move {
            let mut seen = Vec::new();
            let mut id = 1;
            while !flag.load(Ordering::Relaxed) {
                id += 1;
                let start = Instant::now();
                let call = once(port, session.clone(), id);
                let ok = matches!(tokio::time::timeout(LIMIT, call).await, Ok(true));
                seen.push(ok.then(|| start.elapsed()));
                tokio::time::sleep(EVERY.saturating_sub(start.elapsed())).await;
            }
            seen
        });
        Probe { stop, task }
    }

    pub async fn stop(self) -> ProbeReport {
        self.stop.store(true, Ordering::Relaxed);
        let seen = self.task.await.unwrap_or_default();
        let mut ok: Vec<Duration> = seen.iter().flatten().copied().collect();
        ok.sort();
        ProbeReport {
            failed: seen.len() - ok.len(),
            ok,
        }
    }
}

async fn once(port: u16, session: Option<String>, id: u64) -> bool {
    let Ok(mut conn) = Conn::open(port).await else {
        return false;
    };
    let answer = match session {
        Some(s) => {
            conn.session = Some(s);
            conn.post(&add_call(id)).await
        }
        None => {
            let headers = stateless_headers("add");
            let body = stateless_call(id, "add", r#"{"a":2,"b":3}"#);
            conn.call("POST", "/mcp", &headers, &body).await
        }
    };
    answer.is_ok_and(|(head, body)| {
        head.status == 200 && body.windows(ADD_RESULT.len()).any(|w| w == ADD_RESULT)
    })
}

impl ProbeReport {
    /// `control: 98 calls answered, 0 failed; p50 0.4 ms, p99 2.1 ms, max 3.0 ms`.
    pub fn show(&self) -> String {
        format!(
            "control client: {} calls answered, {} not within 5 s; latency p50 {}, p99 {}, max {}",
            self.ok.len(),
            self.failed,
            crate::ms(crate::pct(&self.ok, 0.5)),
            crate::ms(crate::pct(&self.ok, 0.99)),
            crate::ms(self.ok.last().copied().unwrap_or_default()),
        )
    }
}
