//! The skills extension (SEP-2640) through the in-process client, in both eras: the
//! declaration, `skills/list`, `skills/get`, reads of skill files, `resources/directory/read`,
//! and what is refused (traversal, links leading outside, invalid skills).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_runtime::testing::TestClient;
use mcp_runtime::{BuildError, McpError, ProtocolVersion, Server, ServerBuilder};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const ERAS: [ProtocolVersion; 2] = [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28];

const PDF_SKILL_MD: &str = "---\nname: pdf-processing\ndescription: Work with PDF files.\nlicense: Apache-2.0\nmetadata:\n  version: \"2.1\"\n  tags: [pdf, forms]\n---\n# PDF\nSee references/FORMS.md.\n";
const FORMS_MD: &str = "# Forms\nList the fields first.\n";
const EXTRACT_PY: &str = "print('hi')\n";
const LOGO: &[u8] = &[0x89, b'P', b'N', b'G', 0xff, 0x00];
const GIT_SKILL_MD: &str =
    "---\nname: git-workflow\ndescription: Follow our Git conventions.\n---\nRebase, then merge.\n";

/// A scratch skills directory, removed on drop.
struct Dir(PathBuf);

impl Dir {
    fn new(label: &str) -> Dir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let root = std::env::temp_dir().join(format!(
            "mcp-skills-test-{}-{label}-{n}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("skills")).unwrap();
        Dir(root)
    }

    /// The skills directory (`outside()` is its sibling).
    fn skills(&self) -> PathBuf {
        self.0.join("skills")
    }

    fn outside(&self) -> PathBuf {
        self.0.join("outside")
    }

    fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.skills().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// `pdf-processing` (with nested files and a binary one) and `git-workflow`.
    fn standard(label: &str) -> Dir {
        let dir = Dir::new(label);
        dir.write("pdf-processing/SKILL.md", PDF_SKILL_MD);
        dir.write("pdf-processing/references/FORMS.md", FORMS_MD);
        dir.write("pdf-processing/scripts/extract.py", EXTRACT_PY);
        dir.write("pdf-processing/assets/logo.png", LOGO);
        dir.write("pdf-processing/.hidden", "not served");
        dir.write("git-workflow/SKILL.md", GIT_SKILL_MD);
        dir.write("README.md", "not part of any skill");
        std::fs::create_dir_all(dir.outside()).unwrap();
        std::fs::write(dir.outside().join("secret.txt"), "secret").unwrap();
        dir
    }

    fn builder(&self) -> ServerBuilder {
        Server::builder().skills_dir(self.skills())
    }

    fn server(&self) -> Server {
        self.builder().build().expect("valid skills")
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn digest(bytes: impl AsRef<[u8]>) -> String {
    let hash = Sha256::digest(bytes.as_ref());
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

async fn client(server: Server, version: ProtocolVersion) -> TestClient {
    TestClient::connect_to(server, version).await.unwrap()
}

fn code(e: &McpError) -> i32 {
    e.code.0
}

/// A missing resource: -32002 in the session era, -32602 in 2026-07-28.
fn not_found_code(version: ProtocolVersion) -> i32 {
    if version == ProtocolVersion::V2026_07_28 {
        -32602
    } else {
        -32002
    }
}

fn build_error(dir: &Dir) -> String {
    match dir.builder().build() {
        Ok(_) => panic!("the build should fail"),
        Err(e @ BuildError::InvalidSkill { .. }) => e.to_string(),
        Err(other) => panic!("not an InvalidSkill error: {other}"),
    }
}

#[tokio::test]
async fn the_extension_and_resources_are_declared_in_both_eras() {
    let dir = Dir::standard("declare");
    let stateless = client(dir.server(), ProtocolVersion::V2026_07_28).await;
    let discovered = stateless
        .request("server/discover", json!({}))
        .await
        .unwrap();
    let caps = &discovered["capabilities"];
    assert_eq!(
        caps["extensions"]["io.modelcontextprotocol/skills"],
        json!({"directoryRead": true})
    );
    assert!(caps["resources"].is_object(), "{caps}");
    // A session-era client sees the same in `initialize`.
    let init = stateless
        .send_request(
            json!(99),
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await
        .unwrap();
    assert_eq!(&init["result"]["capabilities"], caps);

    // Without a skills directory: no extension, and the methods do not exist.
    let plain = client(
        Server::builder().build().unwrap(),
        ProtocolVersion::V2026_07_28,
    )
    .await;
    let caps = plain.request("server/discover", json!({})).await.unwrap()["capabilities"].clone();
    assert!(caps.get("extensions").is_none(), "{caps}");
    for method in ["skills/list", "skills/get", "resources/directory/read"] {
        let e = plain
            .request(method, json!({"uri": "skill://x/SKILL.md"}))
            .await
            .unwrap_err();
        assert_eq!(code(&e), -32601, "{method}");
    }
}

#[tokio::test]
async fn skills_are_listed_with_verbatim_frontmatter_digests_and_sizes() {
    let dir = Dir::standard("list");
    for version in ERAS {
        let client = client(dir.server(), version).await;
        let result = client.request("skills/list", json!({})).await.unwrap();
        let skills = result["skills"].as_array().unwrap();
        let uris: Vec<&str> = skills.iter().map(|s| s["uri"].as_str().unwrap()).collect();
        assert_eq!(
            uris,
            [
                "skill://git-workflow/SKILL.md",
                "skill://pdf-processing/SKILL.md"
            ],
            "{version}: the README at the top and the dotfile are not skills"
        );
        let pdf = &skills[1];
        assert_eq!(
            pdf["frontmatter"],
            json!({
                "name": "pdf-processing",
                "description": "Work with PDF files.",
                "license": "Apache-2.0",
                "metadata": {"version": "2.1", "tags": ["pdf", "forms"]},
            })
        );
        assert_eq!(
            pdf["resources"],
            json!([
                {"uri": "skill://pdf-processing/SKILL.md", "digest": digest(PDF_SKILL_MD), "size": PDF_SKILL_MD.len()},
                {"uri": "skill://pdf-processing/assets/logo.png", "digest": digest(LOGO), "size": LOGO.len()},
                {"uri": "skill://pdf-processing/references/FORMS.md", "digest": digest(FORMS_MD), "size": FORMS_MD.len()},
                {"uri": "skill://pdf-processing/scripts/extract.py", "digest": digest(EXTRACT_PY), "size": EXTRACT_PY.len()},
            ]),
            "{version}: SKILL.md first, then every other file once, dotfiles left out"
        );
        assert!(result.get("nextCursor").is_none());
        if version == ProtocolVersion::V2026_07_28 {
            assert_eq!(result["ttlMs"], 60_000, "cached like tools/list");
            assert_eq!(result["cacheScope"], "private");
        } else {
            assert!(result.get("ttlMs").is_none());
        }
    }
}

#[tokio::test]
async fn paging_walks_every_skill_and_never_splits_an_entry() {
    let dir = Dir::standard("paging");
    dir.write(
        "zeta/SKILL.md",
        "---\nname: zeta\ndescription: Last.\n---\n",
    );
    for version in ERAS {
        let client = client(dir.builder().page_size(2).build().unwrap(), version).await;
        let first = client.request("skills/list", json!({})).await.unwrap();
        assert_eq!(first["skills"].as_array().unwrap().len(), 2);
        let cursor = first["nextCursor"]
            .as_str()
            .expect("a second page")
            .to_owned();
        let second = client
            .request("skills/list", json!({"cursor": cursor}))
            .await
            .unwrap();
        let rest = second["skills"].as_array().unwrap();
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0]["uri"], "skill://zeta/SKILL.md");
        assert_eq!(rest[0]["resources"].as_array().unwrap().len(), 1);
        assert!(second.get("nextCursor").is_none());
        let e = client
            .request("skills/list", json!({"cursor": "bogus"}))
            .await
            .unwrap_err();
        assert_eq!(code(&e), -32602, "{version}");
    }
}

#[tokio::test]
async fn get_returns_the_listed_entry_and_refuses_unknown_uris() {
    let dir = Dir::standard("get");
    for version in ERAS {
        let client = client(dir.server(), version).await;
        let listed = client.request("skills/list", json!({})).await.unwrap()["skills"][1].clone();
        let got = client
            .request(
                "skills/get",
                json!({"uri": "skill://pdf-processing/SKILL.md"}),
            )
            .await
            .unwrap();
        assert_eq!(got["skill"], listed, "{version}");
        assert!(got.get("nextCursor").is_none());
        if version == ProtocolVersion::V2026_07_28 {
            assert!(
                got["ttlMs"].is_number() && got["cacheScope"].is_string(),
                "{got}"
            );
        }
        for uri in [
            "skill://mcp-conformance-nonexistent-skill-9f3a2b/SKILL.md",
            "skill://pdf-processing/references/FORMS.md",
            "skill://pdf-processing",
            "skill://pdf-processing/%2e%2e/git-workflow/SKILL.md",
        ] {
            let e = client
                .request("skills/get", json!({"uri": uri}))
                .await
                .unwrap_err();
            assert_eq!(code(&e), -32602, "{version} {uri}");
        }
        let e = client.request("skills/get", json!({})).await.unwrap_err();
        assert_eq!(code(&e), -32602, "{version}: no uri");
    }
}

#[tokio::test]
async fn skill_files_are_read_as_text_or_blob_with_a_mime_type() {
    let dir = Dir::standard("read");
    for version in ERAS {
        let client = client(dir.server(), version).await;
        let read = |uri: &'static str| {
            let client = &client;
            async move {
                let result = client
                    .request("resources/read", json!({"uri": uri}))
                    .await
                    .unwrap();
                let contents = result["contents"].as_array().unwrap();
                assert_eq!(contents.len(), 1);
                assert_eq!(contents[0]["uri"], uri);
                contents[0].clone()
            }
        };
        let skill_md = read("skill://pdf-processing/SKILL.md").await;
        assert_eq!(skill_md["mimeType"], "text/markdown");
        assert_eq!(skill_md["text"], PDF_SKILL_MD);
        let forms = read("skill://pdf-processing/references/FORMS.md").await;
        assert_eq!(forms["text"], FORMS_MD, "{version}: a nested file");
        let script = read("skill://pdf-processing/scripts/extract.py").await;
        assert_eq!(script["mimeType"], "text/x-python");
        let logo = read("skill://pdf-processing/assets/logo.png").await;
        assert_eq!(logo["mimeType"], "image/png");
        assert_eq!(logo["blob"], "iVBOR/8A", "{version}: binary as base64");
        assert!(logo.get("text").is_none());
        for unserved in [
            "skill://pdf-processing/.hidden",
            "skill://README.md",
            "skill://pdf-processing/references",
            "skill://pdf-processing/nothing.md",
        ] {
            let e = client
                .request("resources/read", json!({"uri": unserved}))
                .await
                .unwrap_err();
            assert_eq!(code(&e), not_found_code(version), "{version} {unserved}");
        }
    }
}

#[tokio::test]
async fn directory_read_lists_direct_children_and_pages() {
    let dir = Dir::standard("directory");
    for version in ERAS {
        let client = client(dir.server(), version).await;
        let root = client
            .request(
                "resources/directory/read",
                json!({"uri": "skill://pdf-processing"}),
            )
            .await
            .unwrap();
        assert_eq!(
            root["resources"],
            json!([
                {"uri": "skill://pdf-processing/SKILL.md", "name": "pdf-processing", "description": "Work with PDF files.", "mimeType": "text/markdown", "size": PDF_SKILL_MD.len()},
                {"uri": "skill://pdf-processing/assets", "name": "assets", "mimeType": "inode/directory"},
                {"uri": "skill://pdf-processing/references", "name": "references", "mimeType": "inode/directory"},
                {"uri": "skill://pdf-processing/scripts", "name": "scripts", "mimeType": "inode/directory"},
            ]),
            "{version}"
        );
        let refs = client
            .request(
                "resources/directory/read",
                json!({"uri": "skill://pdf-processing/references"}),
            )
            .await
            .unwrap();
        assert_eq!(
            refs["resources"],
            json!([{"uri": "skill://pdf-processing/references/FORMS.md", "name": "FORMS.md", "mimeType": "text/markdown", "size": FORMS_MD.len()}])
        );
        for not_a_directory in [
            "skill://pdf-processing/SKILL.md",
            "skill://pdf-processing/references/",
            "skill://pdf-processing/nothing",
            "skill://pdf-processing/references/..",
            "skill://",
        ] {
            let e = client
                .request("resources/directory/read", json!({"uri": not_a_directory}))
                .await
                .unwrap_err();
            assert_eq!(code(&e), -32602, "{version} {not_a_directory}");
        }
    }
    // Paged like resources/list.
    let client = client(
        dir.builder().page_size(3).build().unwrap(),
        ProtocolVersion::V2026_07_28,
    )
    .await;
    let first = client
        .request(
            "resources/directory/read",
            json!({"uri": "skill://pdf-processing"}),
        )
        .await
        .unwrap();
    assert_eq!(first["resources"].as_array().unwrap().len(), 3);
    let cursor = first["nextCursor"].as_str().unwrap();
    let second = client
        .request(
            "resources/directory/read",
            json!({"uri": "skill://pdf-processing", "cursor": cursor}),
        )
        .await
        .unwrap();
    assert_eq!(
        second["resources"][0]["uri"],
        "skill://pdf-processing/scripts"
    );
    assert!(second.get("nextCursor").is_none());
}

#[tokio::test]
async fn skill_manifests_are_in_resources_list() {
    let dir = Dir::standard("resources-list");
    let client = client(dir.server(), ProtocolVersion::V2026_07_28).await;
    let listed = client.request("resources/list", json!({})).await.unwrap();
    let resources = listed["resources"].as_array().unwrap();
    let pdf = resources
        .iter()
        .find(|r| r["uri"] == "skill://pdf-processing/SKILL.md")
        .expect("the SKILL.md is listed");
    assert_eq!(pdf["name"], "pdf-processing");
    assert_eq!(pdf["description"], "Work with PDF files.");
    assert_eq!(pdf["mimeType"], "text/markdown");
    assert!(
        !resources
            .iter()
            .any(|r| r["uri"] == "skill://pdf-processing/references/FORMS.md"),
        "supporting files are read by URI, not listed"
    );
    let templates = client
        .request("resources/templates/list", json!({}))
        .await
        .unwrap();
    assert!(templates["resourceTemplates"].is_array());
}

#[tokio::test]
async fn traversal_in_uris_reaches_nothing() {
    let dir = Dir::standard("traversal");
    for version in ERAS {
        let client = client(dir.server(), version).await;
        for uri in [
            "skill://../outside/secret.txt",
            "skill://../x",
            "skill://pdf-processing/../git-workflow/SKILL.md",
            "skill://pdf-processing/%2e%2e/git-workflow/SKILL.md",
            "skill://pdf-processing/%2E%2E/%2E%2E/outside/secret.txt",
            "skill://pdf-processing/references/..%2fFORMS.md",
            "skill://pdf-processing/./SKILL.md",
            "skill://pdf-processing//SKILL.md",
            "skill:///etc/passwd",
            "file:///etc/passwd",
        ] {
            let e = client
                .request("resources/read", json!({"uri": uri}))
                .await
                .unwrap_err();
            assert_eq!(code(&e), not_found_code(version), "{version} {uri}");
            let e = client
                .request("resources/directory/read", json!({"uri": uri}))
                .await
                .unwrap_err();
            assert_eq!(code(&e), -32602, "{version} {uri}");
        }
    }
}

#[cfg(unix)]
#[tokio::test]
async fn links_leading_outside_the_directory_fail_the_build() {
    use std::os::unix::fs::symlink;
    let dir = Dir::standard("links-out");
    symlink(
        dir.outside().join("secret.txt"),
        dir.skills().join("pdf-processing/secret.txt"),
    )
    .unwrap();
    let e = build_error(&dir);
    assert!(e.contains("pdf-processing") && e.contains("outside"), "{e}");

    let dir = Dir::standard("links-dir-out");
    symlink(dir.outside(), dir.skills().join("pdf-processing/more")).unwrap();
    let e = build_error(&dir);
    assert!(e.contains("outside"), "{e}");

    // Links to folders are not followed, even inside (a link to an ancestor would loop).
    let dir = Dir::standard("links-dir-in");
    symlink(
        dir.skills().join("git-workflow"),
        dir.skills().join("pdf-processing/more"),
    )
    .unwrap();
    let e = build_error(&dir);
    assert!(e.contains("link to a folder"), "{e}");

    // A link to a file inside the directory is served as that file.
    let dir = Dir::standard("links-in");
    symlink(
        dir.skills().join("pdf-processing/references/FORMS.md"),
        dir.skills().join("git-workflow/FORMS.md"),
    )
    .unwrap();
    let client = client(dir.server(), ProtocolVersion::V2026_07_28).await;
    let read = client
        .request(
            "resources/read",
            json!({"uri": "skill://git-workflow/FORMS.md"}),
        )
        .await
        .unwrap();
    assert_eq!(read["contents"][0]["text"], FORMS_MD);
}

#[cfg(unix)]
#[tokio::test]
async fn files_changed_after_the_build_are_refused() {
    let dir = Dir::standard("swapped");
    let client = client(dir.server(), ProtocolVersion::V2026_07_28).await;
    // A served file swapped for a link to a file outside (same bytes, so only the link check
    // can catch it).
    let forms = dir.skills().join("pdf-processing/references/FORMS.md");
    std::fs::write(dir.outside().join("FORMS.md"), FORMS_MD).unwrap();
    std::fs::remove_file(&forms).unwrap();
    std::os::unix::fs::symlink(dir.outside().join("FORMS.md"), &forms).unwrap();
    let e = client
        .request(
            "resources/read",
            json!({"uri": "skill://pdf-processing/references/FORMS.md"}),
        )
        .await
        .unwrap_err();
    assert!(e.message.contains("outside"), "{}", e.message);
    // An edited file no longer has the listed digest.
    dir.write("pdf-processing/scripts/extract.py", "print('changed')\n");
    let e = client
        .request(
            "resources/read",
            json!({"uri": "skill://pdf-processing/scripts/extract.py"}),
        )
        .await
        .unwrap_err();
    assert!(
        e.message.contains("changed since the server started"),
        "{}",
        e.message
    );
    // The rest is still served.
    assert!(
        client
            .request(
                "resources/read",
                json!({"uri": "skill://pdf-processing/SKILL.md"})
            )
            .await
            .is_ok()
    );
}

#[test]
fn invalid_skills_fail_the_build_with_the_reason() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "Bad-Name",
            "---\nname: Bad-Name\ndescription: d\n---\n",
            "naming rules",
        ),
        (
            "a--b",
            "---\nname: a--b\ndescription: d\n---\n",
            "naming rules",
        ),
        (
            "-lead",
            "---\nname: -lead\ndescription: d\n---\n",
            "naming rules",
        ),
        (
            "folder",
            "---\nname: other\ndescription: d\n---\n",
            "directory name",
        ),
        (
            "no-description",
            "---\nname: no-description\n---\n",
            "description",
        ),
        (
            "empty-description",
            "---\nname: empty-description\ndescription: \"\"\n---\n",
            "empty",
        ),
        ("no-frontmatter", "# Just markdown\n", "frontmatter"),
        ("not-yaml", "---\nname: [unclosed\n---\n", "YAML"),
        ("a-list", "---\n- name\n---\n", "mapping"),
        (
            "reserved",
            "---\nname: reserved\ndescription: d\nmetadata:\n  io.modelcontextprotocol/x: 1\n---\n",
            "reserved",
        ),
    ];
    for (folder, skill_md, why) in cases {
        let dir = Dir::new("invalid");
        dir.write(&format!("{folder}/SKILL.md"), skill_md);
        let e = build_error(&dir);
        assert!(e.contains(folder) && e.contains(why), "{folder}: {e}");
    }

    let dir = Dir::new("not-utf8");
    dir.write("bin/SKILL.md", [0xff, 0xfe]);
    assert!(build_error(&dir).contains("UTF-8"));

    let dir = Dir::new("at-root");
    dir.write("SKILL.md", GIT_SKILL_MD);
    assert!(build_error(&dir).contains("folder named after it"));

    let missing = Server::builder()
        .skills_dir("/nonexistent/skills")
        .build()
        .unwrap_err();
    assert!(missing.to_string().contains("does not exist"), "{missing}");
}

#[test]
fn skills_over_the_limits_fail_the_build() {
    let dir = Dir::new("many-files");
    dir.write("many/SKILL.md", "---\nname: many\ndescription: d\n---\n");
    for i in 0..512 {
        dir.write(&format!("many/files/{i}.txt"), "x");
    }
    let e = build_error(&dir);
    assert!(e.contains("513 files") && e.contains("512"), "{e}");

    let dir = Dir::new("big");
    dir.write("big/SKILL.md", "---\nname: big\ndescription: d\n---\n");
    let file = std::fs::File::create(dir.skills().join("big/data.bin")).unwrap();
    file.set_len(16 * 1024 * 1024).unwrap(); // with SKILL.md, over 16 MiB
    let e = build_error(&dir);
    assert!(e.contains("16 MiB"), "{e}");

    // Exactly at the limits is fine.
    let dir = Dir::new("at-limit");
    dir.write("edge/SKILL.md", "---\nname: edge\ndescription: d\n---\n");
    for i in 0..511 {
        dir.write(&format!("edge/{i}.txt"), "x");
    }
    assert!(dir.builder().build().is_ok());
}

#[tokio::test]
async fn prefixes_and_nested_skills() {
    let dir = Dir::new("nested");
    dir.write(
        "acme/billing/refunds/SKILL.md",
        "---\nname: refunds\ndescription: Refund.\n---\n",
    );
    dir.write("acme/billing/refunds/examples/email.md", "Hello");
    dir.write(
        "outer/SKILL.md",
        "---\nname: outer\ndescription: Outer.\n---\n",
    );
    dir.write(
        "outer/inner/SKILL.md",
        "---\nname: inner\ndescription: Inner.\n---\n",
    );
    let client = client(dir.server(), ProtocolVersion::V2026_07_28).await;
    let skills = client.request("skills/list", json!({})).await.unwrap()["skills"].clone();
    let uris: Vec<&str> = skills
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        [
            "skill://acme/billing/refunds/SKILL.md",
            "skill://outer/SKILL.md",
            "skill://outer/inner/SKILL.md"
        ]
    );
    let outer: Vec<&Value> = skills[1]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["uri"])
        .collect();
    assert_eq!(
        outer,
        ["skill://outer/SKILL.md", "skill://outer/inner/SKILL.md"],
        "a nested skill's files are the enclosing skill's too"
    );
    let acme = client
        .request("resources/directory/read", json!({"uri": "skill://acme"}))
        .await
        .unwrap();
    assert_eq!(
        acme["resources"],
        json!([{"uri": "skill://acme/billing", "name": "billing", "mimeType": "inode/directory"}])
    );
}

#[test]
fn file_names_are_percent_encoded_in_uris() {
    let dir = Dir::new("encoded");
    dir.write(
        "spaces/SKILL.md",
        "---\nname: spaces\ndescription: d\n---\n",
    );
    let path: &Path = &dir.write("spaces/my notes.md", "n");
    assert!(path.exists());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let client = client(dir.server(), ProtocolVersion::V2026_07_28).await;
        let entry = client
            .request("skills/get", json!({"uri": "skill://spaces/SKILL.md"}))
            .await
            .unwrap();
        assert_eq!(
            entry["skill"]["resources"][1]["uri"],
            "skill://spaces/my%20notes.md"
        );
        let read = client
            .request(
                "resources/read",
                json!({"uri": "skill://spaces/my%20notes.md"}),
            )
            .await
            .unwrap();
        assert_eq!(read["contents"][0]["text"], "n");
        let e = client
            .request(
                "resources/read",
                json!({"uri": "skill://spaces/my notes.md"}),
            )
            .await
            .unwrap_err();
        assert_eq!(code(&e), -32602);
    });
}
