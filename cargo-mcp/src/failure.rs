//! How a command fails: a message for stderr and the process's exit status.

use std::fmt;
use std::process::ExitCode;

/// A command's failure: `error: MESSAGE` on stderr and a non-zero exit.
#[derive(Debug)]
pub(crate) struct Failure {
    message: String,
    /// 1: the server or the tool failed; 2: the command line is wrong (as clap's own errors).
    code: u8,
}

impl Failure {
    /// Something went wrong at run time (the server, the tool, a file).
    pub(crate) fn new(message: impl fmt::Display) -> Self {
        Failure {
            message: message.to_string(),
            code: 1,
        }
    }

    /// The command line asks for something that cannot be (a bad argument, a missing choice).
    pub(crate) fn usage(message: impl fmt::Display) -> Self {
        Failure {
            message: message.to_string(),
            code: 2,
        }
    }

    pub(crate) fn report(self) -> ExitCode {
        if !self.message.is_empty() {
            eprintln!("error: {}", self.message);
        }
        ExitCode::from(self.code)
    }
}

impl From<mcp_runtime::client::ClientError> for Failure {
    fn from(e: mcp_runtime::client::ClientError) -> Self {
        Failure::new(e)
    }
}
