//! Closing the listener without resetting a connection a load balancer already used.
//!
//! Closing a listening socket resets every connection still in the kernel's accept queue and
//! every handshake in progress. The peer of such a connection (nginx, say) took the handshake
//! as done and may have sent a request on it: the reset then costs that request, and a load
//! balancer does not resend a `POST`. The accept loop serves what is queued before it closes;
//! on Linux it first stops new handshakes at the listener, so none starts in the instant
//! before the close: a packet filter drops new SYNs (the peer sends its SYN again after a
//! second, when the port is closed and refuses it, and a load balancer tries another instance)
//! while the handshakes already begun complete and are served.

use std::io;
use std::time::Duration;

use tokio::net::TcpListener;

/// How long handshakes already begun have to complete once new ones are stopped.
pub(super) const SETTLE: Duration = Duration::from_millis(25);

/// Stops new handshakes at `listener`: SYNs without ACK are dropped, every other packet (the
/// rest of a handshake already begun) passes. Errors where the platform has no such filter.
#[cfg(target_os = "linux")]
pub(super) fn stop_new(listener: &TcpListener) -> io::Result<()> {
    use socket2::{SockFilter, SockRef};
    // Classic BPF over the TCP header (a TCP socket's filter sees it from offset 0): load the
    // flags byte, keep SYN and ACK, drop the packet (return 0 bytes) if only SYN is set.
    const LD_B_ABS: u16 = 0x30; // BPF_LD | BPF_B | BPF_ABS
    const AND_K: u16 = 0x54; // BPF_ALU | BPF_AND | BPF_K
    const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const RET_K: u16 = 0x06; // BPF_RET | BPF_K
    const FLAGS: u32 = 13;
    const SYN: u32 = 0x02;
    const ACK: u32 = 0x10;
    let program = [
        SockFilter::new(LD_B_ABS, 0, 0, FLAGS),
        SockFilter::new(AND_K, 0, 0, SYN | ACK),
        SockFilter::new(JEQ_K, 0, 1, SYN),
        SockFilter::new(RET_K, 0, 0, 0),
        SockFilter::new(RET_K, 0, 0, u32::MAX),
    ];
    SockRef::from(listener).attach_filter(&program)
}

#[cfg(not(target_os = "linux"))]
pub(super) fn stop_new(_listener: &TcpListener) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "no listener packet filter on this platform",
    ))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    #[tokio::test]
    async fn a_connection_begun_before_is_served_and_a_new_one_never_completes() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut before = TcpStream::connect(addr).await.unwrap();
        stop_new(&listener).unwrap();
        // Completed before the filter: accepted, and its data (ACK-flagged segments) passes.
        let (mut accepted, _) = listener.accept().await.unwrap();
        before.write_all(b"ping").await.unwrap();
        let mut got = [0u8; 4];
        accepted.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"ping");
        // A new SYN is dropped: the connect does not complete (the kernel resends the SYN
        // after a second, which is dropped again), where without the filter it takes
        // microseconds on loopback.
        let after = tokio::time::timeout(Duration::from_millis(700), TcpStream::connect(addr));
        assert!(after.await.is_err(), "a handshake started after the filter");
        // Nothing reached the accept queue either.
        let queued = tokio::time::timeout(Duration::from_millis(50), listener.accept());
        assert!(queued.await.is_err());
    }
}
