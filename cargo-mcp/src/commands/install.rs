//! `install`

use crate::Failure;
use crate::cli::InstallArgs;

pub(crate) fn run(_a: InstallArgs) -> Result<(), Failure> {
    Err(Failure::new("not yet"))
}
