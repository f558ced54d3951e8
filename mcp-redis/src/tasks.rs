//! [`RedisTaskStore`]: task records every instance of a fleet shares.

use std::time::{SystemTime, UNIX_EPOCH};

use mcp_runtime::task::{
    StoreFuture, StoreLimits, TaskRecord, TaskStore, TaskStoreError, UpdateOutcome,
};
use redis::aio::ConnectionManager;
use redis::{AsyncCommands, Script};

use crate::Redis;

/// A [`TaskStore`] in Redis, for several instances of one server behind a load balancer: a task
/// created through one instance is read, awaited and cancelled through any other, and a task
/// whose instance stopped ends `failed` when its lease lapses (see [`mcp_runtime::task`]).
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let redis = mcp_redis::Redis::connect("redis://127.0.0.1:6379", "billing").await?;
/// let server = mcp_runtime::Server::builder()
///     .task_store(mcp_redis::RedisTaskStore::new(&redis))
///     .build()?;
/// # let _ = server; Ok(()) }
/// ```
///
/// Layout (under the fleet's prefix `mcp:{fleet}:`):
/// - `task:{id}`: a hash (`json`: the record, `rev`: its revision, `done`: `1` once terminal)
///   that Redis expires at the end of the task's TTL;
/// - `tasks:owner:{owner}`: the owner's task ids in creation order (a sorted set scored by a
///   counter, `tasks:seq`), for `tasks/list`;
/// - `tasks:client:{client}` and `tasks:all`: the tasks of one client
///   ([`TaskRecord::counts_against`]) and every task, scored by expiry, which the limits
///   ([`StoreLimits`]) count in the same Lua script that inserts, so concurrent calls on any
///   number of instances cannot overshoot them; the reapers ([`TaskStore::remove_expired`])
///   take expired tasks out of `tasks:all`, with their leases;
/// - `tasks:done:{client}` and `tasks:done`: finished tasks, scored by when they ended: a
///   create at a limit removes the oldest of them (the client's own, or anyone's when the
///   store is full) before it refuses, in the same script;
/// - `tasks:leases`: unfinished tasks scored by the expiry of their lease, which the reapers
///   of all instances read to end the tasks of stopped instances.
///
/// Leases compare the wall clocks of the instances (a lease written by one is judged lapsed by
/// another): keep the clocks in sync (NTP), and the lease
/// ([`ServerBuilder::task_lease`](mcp_runtime::ServerBuilder::task_lease)) much longer than
/// any skew between them. Redis 7.0 or later (the scripts use `PEXPIRETIME`).
///
/// Every write is a Lua script (atomic), a compare-and-set on the record's revision. Commands
/// go through the shared [`Redis`] connection, which reconnects by itself: while Redis is
/// down, task calls fail with "task store unavailable" (-32603), and they work again once it
/// is back. Redis without persistence loses its tasks when it restarts: they are unknown
/// afterwards, and the instances running them cancel their work at their next lease renewal.
/// The keys of one call are not in one hash slot: Redis Cluster is not supported.
#[derive(Clone)]
pub struct RedisTaskStore {
    conn: ConnectionManager,
    prefix: String,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

/// Inserts a record unless a limit forbids it. `{0, seq}` when inserted, `{1, total}` when
/// the store is full, `{2, mine}` when the client has too many records, none of them finished.
/// Before refusing, it removes finished records, the one that finished first going first: the
/// client's own (`tasks:done:{client}`) at its limit, anyone's (`tasks:done`) when full.
///
/// Expired ids are counted out of `tasks:all`, not trimmed from it: the reapers find there
/// the expired tasks whose leases they must remove too (a lease left behind would stay in
/// `tasks:leases` for good).
const CREATE: &str = r"
local function extend(key, exp)
  if exp == '' then redis.call('PERSIST', key) return end
  local cur = redis.call('PEXPIRETIME', key)
  if cur == -1 and redis.call('ZCARD', key) > 1 then return end
  if cur < tonumber(exp) then redis.call('PEXPIREAT', key, exp) end
end
local prefix = ARGV[10]
local function drop(id)
  local key = prefix .. 'task:' .. id
  local f = redis.call('HMGET', key, 'owner', 'client')
  redis.call('DEL', key)
  redis.call('ZREM', KEYS[2], id)
  redis.call('ZREM', KEYS[6], id)
  redis.call('ZREM', KEYS[7], id)
  if f[1] then redis.call('ZREM', prefix .. 'tasks:owner:' .. f[1], id) end
  if f[2] then
    redis.call('ZREM', prefix .. 'tasks:client:' .. f[2], id)
    redis.call('ZREM', prefix .. 'tasks:done:' .. f[2], id)
  end
end
local function evict(index)
  while true do
    local first = redis.call('ZRANGE', index, 0, 0)
    if #first == 0 then return false end
    redis.call('ZREM', index, first[1])
    if redis.call('EXISTS', prefix .. 'task:' .. first[1]) == 1 then
      drop(first[1])
      return true
    end
  end
end
local now = ARGV[3]
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local mine = redis.call('ZCARD', KEYS[3])
while mine >= tonumber(ARGV[6]) do
  if not evict(KEYS[8]) then return {2, mine} end
  mine = redis.call('ZCARD', KEYS[3])
end
local total = redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf')
while total >= tonumber(ARGV[5]) do
  if not evict(KEYS[7]) then return {1, total} end
  total = redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf')
end
local seq = redis.call('INCR', KEYS[5])
redis.call('HSET', KEYS[1], 'json', ARGV[2], 'rev', ARGV[9], 'done', ARGV[8],
  'owner', ARGV[11], 'client', ARGV[12])
local score = '+inf'
if ARGV[4] ~= '' then
  score = ARGV[4]
  redis.call('PEXPIREAT', KEYS[1], ARGV[4])
end
redis.call('ZADD', KEYS[2], score, ARGV[1])
redis.call('ZADD', KEYS[3], score, ARGV[1])
extend(KEYS[3], ARGV[4])
redis.call('ZADD', KEYS[4], seq, ARGV[1])
extend(KEYS[4], ARGV[4])
if ARGV[8] == '1' then
  redis.call('ZADD', KEYS[7], ARGV[13], ARGV[1])
  redis.call('ZADD', KEYS[8], ARGV[13], ARGV[1])
  extend(KEYS[8], ARGV[4])
elseif ARGV[7] ~= '' then
  redis.call('ZADD', KEYS[6], ARGV[7], ARGV[1])
end
return {0, seq}
";

/// Replaces a record if its revision is `ARGV[1]` (any revision when empty). `{0}` when there
/// is no record, `{1, json}` (the stored one) when the revision differs, `{2}` when written.
/// A record that ends joins the finished ones (`tasks:done`, `tasks:done:{client}`), scored by
/// when it ended, which a create removes first when it needs room.
const UPDATE: &str = r"
local rev = redis.call('HGET', KEYS[1], 'rev')
if not rev then return {0, false} end
if ARGV[1] ~= '' and rev ~= ARGV[1] then
  return {1, redis.call('HGET', KEYS[1], 'json')}
end
redis.call('HSET', KEYS[1], 'json', ARGV[2], 'rev', ARGV[3], 'done', ARGV[4])
if ARGV[4] == '1' then
  redis.call('ZREM', KEYS[2], ARGV[6])
  redis.call('ZADD', KEYS[3], 'NX', ARGV[7], ARGV[6])
  redis.call('ZADD', KEYS[4], 'NX', ARGV[7], ARGV[6])
  if ARGV[8] == '' then
    redis.call('PERSIST', KEYS[4])
  else
    local cur = redis.call('PEXPIRETIME', KEYS[4])
    if cur ~= -1 and cur < tonumber(ARGV[8]) then redis.call('PEXPIREAT', KEYS[4], ARGV[8]) end
  end
elseif ARGV[5] ~= '' then
  redis.call('ZADD', KEYS[2], ARGV[5], ARGV[6])
else
  redis.call('ZREM', KEYS[2], ARGV[6])
end
return {2, false}
";

/// Milliseconds since the Unix epoch.
fn millis(t: SystemTime) -> u64 {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

fn unavailable(e: redis::RedisError) -> TaskStoreError {
    TaskStoreError::Unavailable(format!("redis: {e}"))
}

fn encode(record: &TaskRecord) -> Result<String, TaskStoreError> {
    serde_json::to_string(record)
        .map_err(|e| TaskStoreError::Unavailable(format!("cannot encode a task record: {e}")))
}

/// A stored record, unless it expired (Redis expires it too, but clocks differ by a little).
fn decode(json: &str) -> Result<Option<TaskRecord>, TaskStoreError> {
    let record: TaskRecord = serde_json::from_str(json).map_err(|e| {
        TaskStoreError::Unavailable(format!("a stored task record is not valid: {e}"))
    })?;
    Ok((!record.is_expired(SystemTime::now())).then_some(record))
}

impl RedisTaskStore {
    /// A store on `redis`'s connection and under its fleet's prefix.
    pub fn new(redis: &Redis) -> Self {
        RedisTaskStore {
            conn: redis.connection(),
            prefix: redis.key(""),
        }
    }

    fn record_key(&self, id: &str) -> String {
        format!("{}task:{id}", self.prefix)
    }

    fn key(&self, name: &str) -> String {
        format!("{}tasks:{name}", self.prefix)
    }

    /// The key the limits count `record` under.
    fn client_key(&self, record: &TaskRecord) -> String {
        self.key(&format!("client:{}", record.counts_against()))
    }

    fn done_key(&self, record: &TaskRecord) -> String {
        self.key(&format!("done:{}", record.counts_against()))
    }

    async fn create_record(
        &self,
        record: TaskRecord,
        limits: StoreLimits,
    ) -> Result<(), TaskStoreError> {
        let json = encode(&record)?;
        let opt = |t: Option<SystemTime>| t.map_or_else(String::new, |t| millis(t).to_string());
        let done = if record.status.is_terminal() {
            "1"
        } else {
            "0"
        };
        let mut conn = self.conn.clone();
        let (code, count): (i64, i64) = Script::new(CREATE)
            .key(self.record_key(&record.id))
            .key(self.key("all"))
            .key(self.client_key(&record))
            .key(self.key(&format!("owner:{}", record.owner)))
            .key(self.key("seq"))
            .key(self.key("leases"))
            .key(self.key("done"))
            .key(self.done_key(&record))
            .arg(&record.id)
            .arg(json)
            .arg(millis(SystemTime::now()))
            .arg(opt(record.expires_at()))
            .arg(limits.max_total)
            .arg(limits.max_per_owner)
            .arg(opt(record.lease.as_ref().map(|l| l.expires_at)))
            .arg(done)
            .arg(record.revision)
            .arg(&self.prefix)
            .arg(&record.owner)
            .arg(record.counts_against())
            .arg(millis(record.last_updated_at))
            .invoke_async(&mut conn)
            .await
            .map_err(unavailable)?;
        match code {
            0 => Ok(()),
            1 => Err(TaskStoreError::Full(format!(
                "the server holds {count} unfinished tasks"
            ))),
            _ => Err(TaskStoreError::Full(format!(
                "{count} unfinished tasks of this client (the limit is {})",
                limits.max_per_owner
            ))),
        }
    }

    /// Writes `record` over revision `expected` (any, when `None`), stored as `revision`.
    async fn write(
        &self,
        record: &TaskRecord,
        expected: Option<u64>,
        revision: u64,
    ) -> Result<UpdateOutcome, TaskStoreError> {
        let stored = TaskRecord {
            revision,
            ..record.clone()
        };
        let json = encode(&stored)?;
        let lease = match (&record.lease, record.status.is_terminal()) {
            (Some(lease), false) => millis(lease.expires_at).to_string(),
            _ => String::new(),
        };
        let done = if record.status.is_terminal() {
            "1"
        } else {
            "0"
        };
        let mut conn = self.conn.clone();
        let (code, json): (i64, Option<String>) = Script::new(UPDATE)
            .key(self.record_key(&record.id))
            .key(self.key("leases"))
            .key(self.key("done"))
            .key(self.done_key(record))
            .arg(expected.map_or_else(String::new, |r| r.to_string()))
            .arg(json)
            .arg(revision)
            .arg(done)
            .arg(lease)
            .arg(&record.id)
            .arg(millis(record.last_updated_at))
            .arg(
                record
                    .expires_at()
                    .map_or_else(String::new, |t| millis(t).to_string()),
            )
            .invoke_async(&mut conn)
            .await
            .map_err(unavailable)?;
        Ok(match (code, json) {
            (2, _) => UpdateOutcome::Written,
            (1, Some(json)) => match decode(&json)? {
                Some(stored) => UpdateOutcome::Stale(Box::new(stored)),
                None => UpdateOutcome::Missing,
            },
            _ => UpdateOutcome::Missing,
        })
    }

    async fn get_record(&self, id: &str) -> Result<Option<TaskRecord>, TaskStoreError> {
        let mut conn = self.conn.clone();
        let json: Option<String> = conn
            .hget(self.record_key(id), "json")
            .await
            .map_err(unavailable)?;
        match json {
            Some(json) => decode(&json),
            None => Ok(None),
        }
    }

    async fn remove_record(&self, id: &str) -> Result<(), TaskStoreError> {
        let record = self.get_record(id).await?;
        let mut pipe = redis::pipe();
        pipe.del(self.record_key(id))
            .zrem(self.key("all"), id)
            .zrem(self.key("leases"), id)
            .zrem(self.key("done"), id);
        if let Some(record) = record {
            pipe.zrem(self.key(&format!("owner:{}", record.owner)), id)
                .zrem(self.client_key(&record), id)
                .zrem(self.done_key(&record), id);
        }
        let mut conn = self.conn.clone();
        pipe.query_async::<()>(&mut conn).await.map_err(unavailable)
    }

    async fn list_records(
        &self,
        owner: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<TaskRecord>, bool), TaskStoreError> {
        const BATCH: isize = 100;
        let index = self.key(&format!("owner:{owner}"));
        let mut conn = self.conn.clone();
        let start = match after {
            Some(after) => {
                let score: Option<f64> = conn.zscore(&index, after).await.map_err(unavailable)?;
                score.map_or_else(|| "-inf".to_owned(), |s| format!("({s}"))
            }
            None => "-inf".to_owned(),
        };
        let mut page = Vec::new();
        let mut offset = 0;
        let mut gone = Vec::new();
        while page.len() <= limit {
            let ids: Vec<String> = conn
                .zrangebyscore_limit(&index, &start, "+inf", offset, BATCH)
                .await
                .map_err(unavailable)?;
            if ids.is_empty() {
                break;
            }
            offset += BATCH;
            let mut pipe = redis::pipe();
            for id in &ids {
                pipe.hget(self.record_key(id), "json");
            }
            let found: Vec<Option<String>> =
                pipe.query_async(&mut conn).await.map_err(unavailable)?;
            for (id, json) in ids.into_iter().zip(found) {
                match json.as_deref().map(decode).transpose()?.flatten() {
                    Some(record) if page.len() <= limit => page.push(record),
                    Some(_) => {}
                    None => gone.push(id),
                }
            }
        }
        if !gone.is_empty() {
            // Expired records leave the owner's index when it is next read.
            let _: Result<(), _> = conn.zrem(&index, gone).await;
        }
        let more = page.len() > limit;
        page.truncate(limit);
        Ok((page, more))
    }

    async fn remove_expired_records(&self, now: SystemTime) -> Result<Vec<String>, TaskStoreError> {
        let mut conn = self.conn.clone();
        let all = self.key("all");
        let ids: Vec<String> = conn
            .zrangebyscore_limit(&all, "-inf", millis(now), 0, 1000)
            .await
            .map_err(unavailable)?;
        if ids.is_empty() {
            return Ok(ids);
        }
        let mut pipe = redis::pipe();
        pipe.zrem(&all, &ids)
            .zrem(self.key("leases"), &ids)
            .zrem(self.key("done"), &ids);
        for id in &ids {
            pipe.del(self.record_key(id));
        }
        pipe.query_async::<()>(&mut conn)
            .await
            .map_err(unavailable)?;
        Ok(ids)
    }

    /// The lapsed leases of tasks that still have a record. The leases of tasks whose record
    /// is gone (expired, or lost by Redis) are removed as they are met: nobody else would, and
    /// left in place they would fill every batch ahead of the tasks the reapers must end.
    async fn lapsed_records(&self, now: SystemTime) -> Result<Vec<String>, TaskStoreError> {
        const BATCH: isize = 1000;
        let leases = self.key("leases");
        let mut conn = self.conn.clone();
        loop {
            let ids: Vec<String> = conn
                .zrangebyscore_limit(&leases, "-inf", millis(now), 0, BATCH)
                .await
                .map_err(unavailable)?;
            if ids.is_empty() {
                return Ok(ids);
            }
            let mut pipe = redis::pipe();
            for id in &ids {
                pipe.exists(self.record_key(id));
            }
            let found: Vec<bool> = pipe.query_async(&mut conn).await.map_err(unavailable)?;
            let full = ids.len() as isize == BATCH;
            let (mut live, mut gone) = (Vec::new(), Vec::new());
            for (id, found) in ids.into_iter().zip(found) {
                if found {
                    live.push(id);
                } else {
                    gone.push(id);
                }
            }
            if gone.is_empty() {
                return Ok(live);
            }
            let _: () = conn.zrem(&leases, gone).await.map_err(unavailable)?;
            // A batch of nothing but stale leases: the next one may hold the real ones.
            if !live.is_empty() || !full {
                return Ok(live);
            }
        }
    }
}

impl TaskStore for RedisTaskStore {
    fn create(&self, record: TaskRecord, limits: StoreLimits) -> StoreFuture<'_, ()> {
        Box::pin(self.create_record(record, limits))
    }

    fn get(&self, id: &str) -> StoreFuture<'_, Option<TaskRecord>> {
        let id = id.to_owned();
        Box::pin(async move { self.get_record(&id).await })
    }

    fn put(&self, record: TaskRecord) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            self.write(&record, None, record.revision).await?;
            Ok(())
        })
    }

    fn update(&self, record: TaskRecord) -> StoreFuture<'_, UpdateOutcome> {
        Box::pin(async move {
            let next = record.revision.wrapping_add(1);
            self.write(&record, Some(record.revision), next).await
        })
    }

    fn remove(&self, id: &str) -> StoreFuture<'_, ()> {
        let id = id.to_owned();
        Box::pin(async move { self.remove_record(&id).await })
    }

    fn list(
        &self,
        owner: &str,
        after: Option<&str>,
        limit: usize,
    ) -> StoreFuture<'_, (Vec<TaskRecord>, bool)> {
        let (owner, after) = (owner.to_owned(), after.map(str::to_owned));
        Box::pin(async move { self.list_records(&owner, after.as_deref(), limit).await })
    }

    fn remove_expired(&self, now: SystemTime) -> StoreFuture<'_, Vec<String>> {
        Box::pin(self.remove_expired_records(now))
    }

    fn lapsed(&self, now: SystemTime) -> StoreFuture<'_, Vec<String>> {
        Box::pin(self.lapsed_records(now))
    }
}
