//! `inspect`: the server's description (`--describe`: identity, capabilities and every list) or
//! server card (`--server-card`, which `--manifest` also prints), printed by the server's own
//! binary, which `run!()` gives these flags: nothing is connected, no tool runs.

use std::process::{Command, Stdio};

use serde_json::Value;

use crate::cli::InspectArgs;
use crate::package::{self, Profile};
use crate::{Failure, args, output};

pub(crate) fn run(a: InspectArgs) -> Result<(), Failure> {
    let command = match &a.stdio {
        Some(command) => args::words(command)?,
        None => vec![
            package::build_or_fail(&a.package, Profile::Debug)?
                .to_string_lossy()
                .into_owned(),
        ],
    };
    let flag = if a.server_card {
        "--server-card"
    } else {
        "--describe"
    };
    let out = Command::new(&command[0])
        .args(&command[1..])
        .arg(flag)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Failure::new(format!("cannot run the server {:?}: {e}", command[0])))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(Failure::new(format!(
            "the server did not print its {}: {}",
            &flag[2..],
            stderr.trim()
        )));
    }
    let value: Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        Failure::new(format!(
            "{} printed no JSON for {flag} ({e}); is it an mcp-runtime server (run!())?",
            command[0]
        ))
    })?;
    if a.json {
        output::json(&value);
    } else {
        summary(&value);
    }
    Ok(())
}

/// The manifest or card for a person: who the server is, then what it offers.
fn summary(value: &Value) {
    let text = |k: &str| value.get(k).and_then(Value::as_str);
    let mut head = text("name").unwrap_or("(unnamed)").to_owned();
    if let Some(version) = text("version") {
        head = format!("{head} {version}");
    }
    if let Some(title) = text("title") {
        head = format!("{head}: {title}");
    }
    println!("{head}");
    for key in ["description", "websiteUrl", "instructions"] {
        if let Some(t) = text(key) {
            println!("  {key}: {t}");
        }
    }
    if let Some(url) = value.pointer("/repository/url").and_then(Value::as_str) {
        println!("  repository: {url}");
    }
    let list = |key: &str| {
        value
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    if ["tools", "resources", "resourceTemplates", "prompts"]
        .iter()
        .any(|k| value.get(*k).is_some())
    {
        output::listing(
            &list("tools"),
            &list("resources"),
            &list("resourceTemplates"),
            &list("prompts"),
        );
    }
}
