//! The shared connection: it reaches a real redis-server and comes back by itself after the
//! server restarts (every store relies on that).

mod support;

use std::time::{Duration, Instant};

#[tokio::test]
async fn the_connection_survives_a_redis_restart() {
    let Some(mut server) = support::RedisServer::start() else {
        return;
    };
    let redis = mcp_redis::Redis::connect(&server.url(), "t").await.unwrap();
    let mut conn = redis.connection();
    let pong: String = redis::cmd("PING").query_async(&mut conn).await.unwrap();
    assert_eq!(pong, "PONG");
    server.restart();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match redis::cmd("PING").query_async::<String>(&mut conn).await {
            Ok(pong) => {
                assert_eq!(pong, "PONG");
                break;
            }
            Err(e) => {
                assert!(Instant::now() < deadline, "no reconnect: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}
