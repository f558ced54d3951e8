//! `install`: the server built in release mode, its entry (what the binary's own
//! `--client-config` prints: the absolute path and the arguments it needs) written into a
//! desktop client's configuration file. The file is backed up first; other entries and
//! settings are kept; an entry of the same name is replaced only with `--force`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Map, Value, json};

use crate::cli::InstallArgs;
use crate::package::{self, Profile};
use crate::{Failure, args, output};

pub(crate) fn run(a: InstallArgs) -> Result<(), Failure> {
    let env = args::parse(&a.env, None, "--env")?;
    let binary = match &a.binary {
        Some(path) => path.clone(),
        None => package::build_or_fail(&a.package, Profile::Release)?,
    };
    let (server_name, printed) = client_config(&binary)?;
    let name = a.name.clone().unwrap_or(server_name);
    let entry = a.client.entry(&printed, &env);
    let path = match &a.config {
        Some(path) => path.clone(),
        None => a.client.config_path()?,
    };
    let key = a.client.servers_key();
    if a.print {
        output::json(&json!({ key: { name.as_str(): entry } }));
        eprintln!("(for {}, in {})", a.client.title(), path.display());
        return Ok(());
    }
    let mut config = read_config(&path)?;
    let servers = config
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| {
            Failure::new(format!(
                "{} has a {key:?} that is not an object",
                path.display()
            ))
        })?;
    if servers.contains_key(&name) && !a.force {
        return Err(Failure::new(format!(
            "{} already has a server named {name:?}: --force replaces it, --name picks another name",
            path.display()
        )));
    }
    servers.insert(name.clone(), entry);
    let backup = write_config(&path, &Value::Object(config))?;
    eprintln!(
        "Added {name:?} to {} ({}){}. Restart {} to load it.",
        a.client.title(),
        path.display(),
        backup
            .map(|b| format!("; the previous file is {}", b.display()))
            .unwrap_or_default(),
        a.client.title()
    );
    Ok(())
}

/// The server's name and `{command, args}` entry, from `BINARY --client-config`.
fn client_config(binary: &Path) -> Result<(String, Value), Failure> {
    let out = Command::new(binary)
        .arg("--client-config")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Failure::new(format!("cannot run {}: {e}", binary.display())))?;
    if !out.status.success() {
        return Err(Failure::new(format!(
            "{} --client-config failed: {}",
            binary.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let printed: Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        Failure::new(format!(
            "{} printed no JSON for --client-config ({e}); is it an mcp-runtime server (run!())?",
            binary.display()
        ))
    })?;
    printed
        .get("mcpServers")
        .and_then(Value::as_object)
        .and_then(|servers| servers.iter().next())
        .map(|(name, entry)| (name.clone(), entry.clone()))
        .ok_or_else(|| {
            Failure::new(format!(
                "{} --client-config printed no server",
                binary.display()
            ))
        })
}

/// The file's JSON object (an empty one when there is no file yet).
fn read_config(path: &Path) -> Result<Map<String, Value>, Failure> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(e) => return Err(Failure::new(format!("cannot read {}: {e}", path.display()))),
    };
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(Failure::new(format!(
            "{} is not a JSON object",
            path.display()
        ))),
        Err(e) => Err(Failure::new(format!(
            "{} is not plain JSON ({e}); comments and trailing commas are not rewritten: add the \
             entry by hand (--print shows it)",
            path.display()
        ))),
    }
}

/// Writes `config` to `path`: the old file copied to `PATH.bak` first, the new one written
/// beside it and renamed over it (a crash leaves the old file or the new one, never half).
fn write_config(path: &Path, config: &Value) -> Result<Option<PathBuf>, Failure> {
    let fail = |what: &str, p: &Path, e: std::io::Error| {
        Failure::new(format!("cannot {what} {}: {e}", p.display()))
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| fail("create", dir, e))?;
    }
    let mut backup = None;
    if path.exists() {
        let bak = with_suffix(path, ".bak");
        std::fs::copy(path, &bak).map_err(|e| fail("back up to", &bak, e))?;
        backup = Some(bak);
    }
    let tmp = with_suffix(path, ".cargo-mcp.tmp");
    let mut text = serde_json::to_string_pretty(config).expect("JSON values serialize");
    text.push('\n');
    std::fs::write(&tmp, text).map_err(|e| fail("write", &tmp, e))?;
    if let Ok(meta) = std::fs::metadata(path) {
        // Keep the file's permissions (~/.claude.json holds credentials: 0600).
        let _ = std::fs::set_permissions(&tmp, meta.permissions());
    }
    std::fs::rename(&tmp, path).map_err(|e| fail("replace", path, e))?;
    Ok(backup)
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}
