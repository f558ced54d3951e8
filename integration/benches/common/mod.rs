//! Shared by the benches: the server's CPU time per call.
//!
//! The first field of `/proc/PID/task/TID/schedstat` is the nanoseconds thread TID has spent on
//! a CPU. A [`CpuSample`] reads it for every thread of the server; two samples around a load
//! window give the CPU the server used in it. A thread that started during the window counts
//! from zero; one that exited during it is missing from the end sample, so its CPU since the
//! start sample is lost (counted in [`CpuUse::exited`] so the report can say so).

use std::collections::HashMap;

/// CPU nanoseconds per thread of one process, by thread id, at one moment.
pub struct CpuSample(HashMap<u32, u64>);

impl CpuSample {
    /// Reads every thread of `pid`; `None` without `/proc/PID/task/*/schedstat`.
    pub fn take(pid: u32) -> Option<CpuSample> {
        let mut threads = HashMap::new();
        for entry in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
            let Some(tid) = entry
                .ok()
                .and_then(|e| e.file_name().to_str()?.parse().ok())
            else {
                continue;
            };
            // A thread may exit between the listing and the read: it is skipped.
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/schedstat"))
            else {
                continue;
            };
            if let Some(ns) = stat.split_whitespace().next().and_then(|f| f.parse().ok()) {
                threads.insert(tid, ns);
            }
        }
        (!threads.is_empty()).then_some(CpuSample(threads))
    }

    /// The CPU used from `start` to this (later) sample.
    pub fn since(&self, start: &CpuSample) -> CpuUse {
        let ns = self
            .0
            .iter()
            .map(|(tid, &end)| end.saturating_sub(start.0.get(tid).copied().unwrap_or(0)))
            .sum();
        let exited = start.0.keys().filter(|t| !self.0.contains_key(t)).count();
        CpuUse { ns, exited }
    }
}

/// The CPU a process used between two samples.
#[derive(Clone, Copy)]
pub struct CpuUse {
    /// Nanoseconds on a CPU, summed over threads.
    pub ns: u64,
    /// Threads in the start sample but not the end one (their CPU in the window is not counted).
    pub exited: usize,
}

impl CpuUse {
    /// The CPU used between two samples of `pid` taken by `during` (which returns what it
    /// measured), or `None` without `/proc`.
    pub fn around<T>(pid: u32, during: impl FnOnce() -> T) -> (T, Option<CpuUse>) {
        let start = CpuSample::take(pid);
        let result = during();
        let end = CpuSample::take(pid);
        let cpu = start.zip(end).map(|(start, end)| end.since(&start));
        (result, cpu)
    }

    /// Microseconds of CPU per call, for `calls` calls completed in the window.
    pub fn us_per_call(&self, calls: usize) -> Option<f64> {
        (calls > 0).then(|| self.ns as f64 / 1e3 / calls as f64)
    }

    /// Says so when threads exited during the window (their CPU is missing).
    pub fn warn_if_incomplete(&self, what: &str) {
        if self.exited > 0 {
            println!(
                "note: {} thread(s) of the {what} server exited during the window; \
                 their CPU time is not counted",
                self.exited
            );
        }
    }
}

/// `x` with `decimals` decimals, or `?` when unknown.
pub fn or_unknown(x: Option<f64>, decimals: usize) -> String {
    x.map_or_else(|| "?".to_owned(), |x| format!("{x:.decimals$}"))
}
