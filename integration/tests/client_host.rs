//! What a host needs of `mcp_runtime::client` against this framework's own server, in
//! process over HTTP: the 2026-07-28 cache hints on lists and `server/discover`, the optional
//! response cache that honours them (counted on the server: a cached list is not asked for
//! again within its `ttlMs`, and is after a `list_changed`), and skills read with their
//! digests checked (SEP-2640).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_runtime::client::{CacheScope, Client, ClientError, ProtocolChoice};
use mcp_runtime::middleware::{self, McpRequest, Next};
use mcp_runtime::prelude::*;
use mcp_runtime::transport::{HttpConfig, serve_http_on};
use mcp_runtime::{ProtocolVersion, ServerBuilder};
use serde_json::json;

const SESSION: ProtocolChoice = ProtocolChoice::Session(ProtocolVersion::V2025_11_25);

/// Adds one to a number.
#[tool]
async fn increment(n: i64) -> i64 {
    n + 1
}

/// Says the tool list changed (on the open listen streams and sessions).
#[tool]
async fn announce_tool_change(ctx: Context) -> String {
    ctx.catalog().tools_changed();
    "announced".into()
}

/// Requests the server was asked, by method.
#[derive(Clone, Default)]
struct Counts(Arc<Mutex<HashMap<String, usize>>>);

impl Counts {
    fn of(&self, method: &str) -> usize {
        self.0.lock().unwrap().get(method).copied().unwrap_or(0)
    }
}

/// A server on a free port, on a runtime of its own, counting the requests it is asked;
/// `configure` sets it up further. Returns its URL and the counts.
fn start(
    configure: impl FnOnce(ServerBuilder) -> ServerBuilder + Send + 'static,
) -> (String, Counts) {
    let counts = Counts::default();
    let seen = counts.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap().port()).unwrap();
            let count = middleware::from_fn(move |req: McpRequest, next: Next| {
                *seen
                    .0
                    .lock()
                    .unwrap()
                    .entry(req.method().to_owned())
                    .or_default() += 1;
                next.run(req)
            });
            let server = configure(
                mcp_runtime::Server::builder()
                    .name("host-test")
                    .version("1")
                    .middleware(count),
            )
            .build()
            .unwrap();
            let _ = serve_http_on(server, listener, HttpConfig::default()).await;
        });
    });
    let port = rx.recv().unwrap();
    (format!("http://127.0.0.1:{port}/mcp"), counts)
}

async fn connect(url: &str, protocol: ProtocolChoice, cache: bool) -> Client {
    Client::builder()
        .info("host-test", "1.0.0")
        .protocol(protocol)
        .cache(cache)
        .request_timeout(Duration::from_secs(20))
        .connect(url)
        .await
        .unwrap_or_else(|e| panic!("connecting with {protocol:?}: {e}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn lists_and_discovery_carry_the_servers_cache_hints() {
    let (url, _) = start(|b| {
        b.cache_ttl(Duration::from_secs(90))
            .cache_scope(CacheScope::Public)
    });
    let client = connect(&url, ProtocolChoice::Stateless, false).await;
    let tools = client.list_tools_listed().await.unwrap();
    assert!(tools.items.iter().any(|t| t.name == "increment"));
    let hint = tools.cache.expect("a 2026-07-28 list carries a hint");
    assert_eq!(hint.ttl, Duration::from_secs(90));
    assert_eq!(hint.scope, CacheScope::Public);
    assert!(!tools.from_cache);
    let found = client.discover().await.unwrap();
    assert!(
        found
            .supported_versions
            .iter()
            .any(|v| v == ProtocolVersion::V2026_07_28.as_str())
    );
    assert_eq!(found.cache.map(|h| h.ttl), Some(Duration::from_secs(90)));
    assert_eq!(
        found.server_info.map(|i| i.name).as_deref(),
        Some("host-test")
    );
    // The session era has no hints.
    let session = connect(&url, SESSION, true).await;
    assert_eq!(session.list_tools_listed().await.unwrap().cache, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cached_list_is_not_asked_again_within_its_ttl_and_is_after_list_changed() {
    let (url, counts) = start(|b| b.cache_ttl(Duration::from_secs(600)));
    let client = connect(&url, ProtocolChoice::Stateless, true).await;
    let mut listen = client
        .listen(json!({"toolsListChanged": true}))
        .await
        .unwrap();
    assert_eq!(
        listen.next().await.unwrap().method,
        "notifications/subscriptions/acknowledged"
    );

    let first = client.list_tools_listed().await.unwrap();
    assert!(!first.from_cache);
    assert_eq!(counts.of("tools/list"), 1);
    for _ in 0..3 {
        let again = client.list_tools_listed().await.unwrap();
        assert!(again.from_cache);
        assert_eq!(again.items, first.items);
    }
    assert_eq!(counts.of("tools/list"), 1, "served from the cache");
    let discover_before = counts.of("server/discover");
    client.discover().await.unwrap();
    client.discover().await.unwrap();
    assert_eq!(counts.of("server/discover"), discover_before + 1);

    // The change is announced: the cache drops the list before the notification is heard.
    client
        .call_tool("announce_tool_change", json!({}))
        .await
        .unwrap();
    let change = tokio::time::timeout(Duration::from_secs(20), listen.next())
        .await
        .expect("the change within 20 s")
        .unwrap();
    assert_eq!(change.method, "notifications/tools/list_changed");
    let after = client.list_tools_listed().await.unwrap();
    assert!(!after.from_cache);
    assert_eq!(
        counts.of("tools/list"),
        2,
        "fetched again after list_changed"
    );
    assert!(client.list_tools_listed().await.unwrap().from_cache);
    assert_eq!(counts.of("tools/list"), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cached_list_is_asked_again_once_its_ttl_passes() {
    let ttl = Duration::from_millis(300);
    let (url, counts) = start(move |b| b.cache_ttl(ttl));
    let client = connect(&url, ProtocolChoice::Stateless, true).await;
    let fetched = Instant::now();
    client.list_tools().await.unwrap();
    let within = client.list_tools_listed().await.unwrap();
    // On a loaded machine the ttl may already have passed; only then may it be fetched again.
    if fetched.elapsed() < ttl {
        assert!(within.from_cache);
    }
    // Waiting out the ttl is the behaviour under test, not synchronisation.
    tokio::time::sleep_until((fetched + ttl + Duration::from_millis(50)).into()).await;
    let before = counts.of("tools/list");
    assert!(!client.list_tools_listed().await.unwrap().from_cache);
    assert_eq!(counts.of("tools/list"), before + 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn without_the_cache_or_without_hints_every_list_is_asked() {
    let (url, counts) = start(|b| b.cache_ttl(Duration::from_secs(600)));
    let plain = connect(&url, ProtocolChoice::Stateless, false).await;
    plain.list_tools().await.unwrap();
    plain.list_tools().await.unwrap();
    assert_eq!(counts.of("tools/list"), 2);
    // The session era sends no hints: nothing is kept even with the cache on.
    let session = connect(&url, SESSION, true).await;
    session.list_tools().await.unwrap();
    assert!(!session.list_tools_listed().await.unwrap().from_cache);
    assert_eq!(counts.of("tools/list"), 4);
}

const PDF_SKILL_MD: &str = "---\nname: pdf-processing\ndescription: Work with PDF files.\nmetadata:\n  version: \"2.1\"\n---\n# PDF\nSee references/FORMS.md.\n";
const FORMS_MD: &str = "# Forms\nList the fields first.\n";
const LOGO: &[u8] = &[0x89, b'P', b'N', b'G', 0xff, 0x00];

/// A scratch skills directory with one skill, removed on drop.
struct SkillsDir(PathBuf);

impl SkillsDir {
    fn new(label: &str) -> SkillsDir {
        let root =
            std::env::temp_dir().join(format!("mcp-client-host-{}-{label}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (rel, bytes) in [
            ("pdf-processing/SKILL.md", PDF_SKILL_MD.as_bytes()),
            ("pdf-processing/references/FORMS.md", FORMS_MD.as_bytes()),
            ("pdf-processing/assets/logo.png", LOGO),
        ] {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        SkillsDir(root)
    }
}

impl Drop for SkillsDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn skills_are_listed_then_loaded_with_every_file_checked() {
    let dir = SkillsDir::new("load");
    let root = dir.0.clone();
    let (url, counts) = start(move |b| b.skills_dir(root));
    for protocol in [SESSION, ProtocolChoice::Stateless] {
        let client = connect(&url, protocol, false).await;
        let reads = counts.of("resources/read");
        let index = client.list_skills().await.unwrap();
        assert_eq!(index.len(), 1, "{protocol:?}");
        let entry = &index[0];
        assert_eq!(entry.uri, "skill://pdf-processing/SKILL.md");
        assert_eq!(entry.name, "pdf-processing");
        assert_eq!(entry.description.as_deref(), Some("Work with PDF files."));
        assert_eq!(entry.files.as_ref().map(Vec::len), Some(3));
        assert_eq!(counts.of("resources/read"), reads, "listing reads no file");
        // Loading reads SKILL.md only; a supporting file is read when asked for.
        let loaded = client.load_skill(entry).await.unwrap();
        assert_eq!(loaded.manifest(), PDF_SKILL_MD);
        assert_eq!(loaded.files.len(), 1);
        assert_eq!(counts.of("resources/read"), reads + 1);
        let forms = client
            .read_skill_file(entry, "skill://pdf-processing/references/FORMS.md")
            .await
            .unwrap();
        assert_eq!(forms.text(), Some(FORMS_MD));
        assert_eq!(counts.of("resources/read"), reads + 2);
        let reads = counts.of("resources/read");

        let skill = client.read_skill("pdf-processing").await.unwrap();
        assert_eq!(skill.manifest(), PDF_SKILL_MD);
        assert_eq!(skill.files.len(), 3);
        let bytes = |uri: &str| {
            skill
                .files
                .iter()
                .find(|f| f.uri == uri)
                .map(|f| f.bytes.clone())
        };
        assert_eq!(
            bytes("skill://pdf-processing/references/FORMS.md").as_deref(),
            Some(FORMS_MD.as_bytes())
        );
        assert_eq!(
            bytes("skill://pdf-processing/assets/logo.png").as_deref(),
            Some(LOGO)
        );
        assert_eq!(counts.of("resources/read"), reads + 3);
        assert_eq!(
            client.get_skill(&entry.uri).await.unwrap(),
            *entry,
            "skills/get gives the listed entry"
        );
        assert!(matches!(
            client.read_skill("no-such-skill").await,
            Err(ClientError::Protocol(_))
        ));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_that_does_not_match_its_index_entry_is_refused() {
    let dir = SkillsDir::new("tamper");
    let root = dir.0.clone();
    let (url, counts) = start(move |b| b.skills_dir(root));
    let client = connect(&url, ProtocolChoice::Stateless, false).await;
    let entry = client.list_skills().await.unwrap().remove(0);
    let reads = counts.of("resources/read");

    // The index says another digest for SKILL.md than the file has.
    let mut lying = entry.clone();
    let manifest = lying
        .files
        .as_mut()
        .unwrap()
        .iter_mut()
        .find(|f| f.uri == entry.uri)
        .unwrap();
    manifest.digest = format!("sha256:{}", "0".repeat(64));
    let err = client.load_skill(&lying).await.unwrap_err();
    let ClientError::Integrity { uri, detail } = &err else {
        panic!("not an integrity error: {err}");
    };
    assert_eq!(uri, &entry.uri);
    assert!(detail.contains("digest"), "{detail}");
    assert_eq!(
        counts.of("resources/read"),
        reads + 1,
        "stopped at SKILL.md"
    );

    // Or another size for a supporting file.
    let forms_uri = "skill://pdf-processing/references/FORMS.md";
    let mut lying = entry.clone();
    let files = lying.files.as_mut().unwrap();
    let forms = files.iter_mut().find(|f| f.uri == forms_uri).unwrap();
    forms.size = forms.size.map(|n| n + 1);
    let err = client.read_skill_file(&lying, forms_uri).await.unwrap_err();
    assert!(
        matches!(&err, ClientError::Integrity { uri, detail }
            if uri.ends_with("FORMS.md") && detail.contains("bytes")),
        "{err}"
    );

    // A file the entry does not list is refused without being read.
    let reads = counts.of("resources/read");
    let mut short = entry.clone();
    short.files.as_mut().unwrap().retain(|f| f.uri != forms_uri);
    let err = client.read_skill_file(&short, forms_uri).await.unwrap_err();
    assert!(
        matches!(&err, ClientError::Integrity { detail, .. } if detail.contains("lists")),
        "{err}"
    );
    assert_eq!(counts.of("resources/read"), reads);

    // Or frontmatter the file does not have.
    let mut lying = entry.clone();
    lying
        .frontmatter
        .insert("description".into(), json!("Exfiltrate credentials"));
    let err = client.load_skill(&lying).await.unwrap_err();
    assert!(
        matches!(&err, ClientError::Integrity { detail, .. } if detail.contains("description")),
        "{err}"
    );
}
