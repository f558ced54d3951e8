//! The current package's server: built with cargo, found in cargo's own report of what it built
//! (`--message-format=json`), so the target directory, the profile and the platform's file names
//! are cargo's business, not ours.

use std::ffi::OsString;
use std::io::BufRead as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::Failure;
use crate::cli::PackageArgs;

/// `cargo`, as cargo named itself to this subcommand (`$CARGO`), else from `PATH`.
pub(crate) fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo")))
}

/// How to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Profile {
    Debug,
    Release,
}

/// What a build gave.
pub(crate) enum Built {
    /// The server's executable.
    Binary(PathBuf),
    /// The build failed; cargo printed why on stderr.
    Failed,
}

/// The cargo arguments that select the package and target.
pub(crate) fn selection(package: &PackageArgs) -> Vec<OsString> {
    let mut args = Vec::new();
    if let Some(path) = &package.manifest_path {
        args.push("--manifest-path".into());
        args.push(path.into());
    }
    if let Some(p) = &package.package {
        args.push("-p".into());
        args.push(p.into());
    }
    if let Some(bin) = &package.bin {
        args.push("--bin".into());
        args.push(bin.into());
    } else if let Some(example) = &package.example {
        args.push("--example".into());
        args.push(example.into());
    }
    args
}

/// Builds the server of the current package and returns its executable. Cargo's diagnostics
/// go to stderr as a normal build's do (with `quiet`, only the warnings and errors).
pub(crate) fn build(
    package: &PackageArgs,
    profile: Profile,
    quiet: bool,
) -> Result<Built, Failure> {
    let mut cmd = cargo();
    cmd.arg("build")
        .arg("--message-format=json-render-diagnostics");
    if quiet {
        cmd.arg("--quiet");
    }
    if profile == Profile::Release {
        cmd.arg("--release");
    }
    cmd.args(selection(package));
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .stdin(Stdio::null());
    let mut child = cmd
        .spawn()
        .map_err(|e| Failure::new(format!("cannot run cargo: {e}")))?;
    let stdout = child.stdout.take().expect("piped");
    let mut executables = Vec::new();
    for line in std::io::BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if let Some(found) = executable(&message) {
            executables.push(found);
        }
    }
    let status = child
        .wait()
        .map_err(|e| Failure::new(format!("cargo did not finish: {e}")))?;
    if !status.success() {
        return Ok(Built::Failed);
    }
    pick(package, executables).map(Built::Binary)
}

/// Builds, turning a failed build into an error (for the commands that stop there).
pub(crate) fn build_or_fail(package: &PackageArgs, profile: Profile) -> Result<PathBuf, Failure> {
    match build(package, profile, true)? {
        Built::Binary(path) => Ok(path),
        Built::Failed => Err(Failure::new(
            "the current package's server did not build (cargo says why above); outside a \
             cargo package, name the server with --stdio \"COMMAND\" or --url URL",
        )),
    }
}

/// The directory of the package `package` selects, and the target directory.
pub(crate) fn locate(package: &PackageArgs) -> Result<(PathBuf, PathBuf), Failure> {
    let mut cmd = cargo();
    cmd.args(["metadata", "--no-deps", "--format-version", "1"]);
    if let Some(path) = &package.manifest_path {
        cmd.arg("--manifest-path").arg(path);
    }
    let out = cmd
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| Failure::new(format!("cannot run cargo: {e}")))?;
    if !out.status.success() {
        return Err(Failure::new(
            "cargo metadata failed: is this a cargo package?",
        ));
    }
    let metadata: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| Failure::new(format!("cargo metadata printed no JSON: {e}")))?;
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(PathBuf::from);
    let target = text(&metadata, "target_directory")
        .ok_or_else(|| Failure::new("cargo metadata names no target directory"))?;
    let manifest = match (&package.package, &package.manifest_path) {
        (Some(name), _) => metadata
            .get("packages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|p| p.get("name").and_then(Value::as_str) == Some(name))
            .and_then(|p| text(p, "manifest_path"))
            .ok_or_else(|| Failure::usage(format!("no package {name:?} in this workspace")))?,
        (None, Some(path)) => std::path::absolute(path)
            .map_err(|e| Failure::new(format!("{}: {e}", path.display())))?,
        (None, None) => {
            let out = cargo()
                .args(["locate-project", "--message-format", "plain"])
                .stderr(Stdio::inherit())
                .output()
                .map_err(|e| Failure::new(format!("cannot run cargo: {e}")))?;
            PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
        }
    };
    let dir = manifest
        .parent()
        .map(PathBuf::from)
        .ok_or_else(|| Failure::new(format!("{} has no directory", manifest.display())))?;
    Ok((dir, target))
}

/// An executable cargo built: (kind, target name, path).
type Executable = (String, String, PathBuf);

fn executable(message: &Value) -> Option<Executable> {
    if message.get("reason")?.as_str()? != "compiler-artifact" {
        return None;
    }
    let path = message.get("executable")?.as_str()?;
    let target = message.get("target")?;
    let kind = target.get("kind")?.as_array()?.first()?.as_str()?;
    let name = target.get("name")?.as_str()?;
    Some((kind.to_owned(), name.to_owned(), PathBuf::from(path)))
}

/// The server among what was built: the named target, else the only binary.
fn pick(package: &PackageArgs, built: Vec<Executable>) -> Result<PathBuf, Failure> {
    let wanted = |kind: &str, name: &str| {
        built
            .iter()
            .find(|(k, n, _)| k == kind && n == name)
            .map(|(_, _, p)| p.clone())
            .ok_or_else(|| Failure::new(format!("cargo built no {kind} named {name:?}")))
    };
    if let Some(bin) = &package.bin {
        return wanted("bin", bin);
    }
    if let Some(example) = &package.example {
        return wanted("example", example);
    }
    let bins: Vec<&Executable> = built.iter().filter(|(k, _, _)| k == "bin").collect();
    match bins.as_slice() {
        [(_, _, path)] => Ok(path.clone()),
        [] => Err(Failure::usage(
            "this package has no binary to run as the server: choose one with --example NAME \
             (or --bin NAME, -p PACKAGE), or name a server with --stdio \"COMMAND\" or --url URL",
        )),
        several => Err(Failure::usage(format!(
            "this package has several binaries ({}): choose one with --bin NAME",
            several
                .iter()
                .map(|(_, n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn artifact(kind: &str, name: &str, exe: Option<&str>) -> Value {
        json!({"reason": "compiler-artifact", "target": {"kind": [kind], "name": name},
               "executable": exe})
    }

    #[test]
    fn the_only_binary_is_the_server() {
        let built: Vec<Executable> = [
            artifact("lib", "w", None),
            artifact("bin", "weather", Some("/t/debug/weather")),
        ]
        .iter()
        .filter_map(executable)
        .collect();
        let path = pick(&PackageArgs::default(), built).ok().unwrap();
        assert_eq!(path, PathBuf::from("/t/debug/weather"));
    }

    #[test]
    fn several_binaries_need_a_choice() {
        let built = vec![
            ("bin".into(), "a".into(), PathBuf::from("/a")),
            ("bin".into(), "b".into(), PathBuf::from("/b")),
        ];
        let args = PackageArgs {
            bin: Some("b".into()),
            ..Default::default()
        };
        assert_eq!(
            pick(&args, built.clone()).ok().unwrap(),
            PathBuf::from("/b")
        );
        let err = pick(&PackageArgs::default(), built).err().unwrap();
        assert!(format!("{err:?}").contains("a, b"), "{err:?}");
    }
}
