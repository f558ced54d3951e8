//! `cargo mcp`: the command line of an MCP server author. `cargo mcp new` scaffolds a server,
//! `cargo mcp dev` runs it and restarts it on every change, `list`/`call`/`read`/`prompt`/
//! `complete` talk to it (or to any server, over stdio or HTTP) with `mcp_runtime::client`,
//! `inspect` prints its description, `install` writes it into a desktop client's configuration and
//! `test conformance` runs the official conformance suite against it.

mod args;
mod cli;
mod clients;
mod commands;
mod connect;
mod failure;
mod output;
mod package;
mod terminal;
mod watch;

use std::process::ExitCode;

use clap::Parser as _;

use crate::cli::{Cli, Command};
pub(crate) use crate::failure::Failure;

fn main() -> ExitCode {
    let cli = Cli::parse_from(cli::argv(std::env::args_os()));
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.report(),
    }
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::List(a) => commands::client::list(a),
        Command::Call(a) => commands::client::call(a),
        Command::Read(a) => commands::client::read(a),
        Command::Prompt(a) => commands::client::prompt(a),
        Command::Complete(a) => commands::client::complete(a),
        Command::Inspect(a) => commands::inspect::run(a),
        Command::Install(a) => commands::install::run(a),
        Command::New(a) => commands::new::run(a),
        Command::Dev(a) => commands::dev::run(a),
        Command::Test(cli::TestCommand::Conformance(a)) => commands::conformance::run(a),
    }
}
