//! `new`

use crate::Failure;
use crate::cli::NewArgs;

pub(crate) fn run(_a: NewArgs) -> Result<(), Failure> {
    Err(Failure::new("not yet"))
}
