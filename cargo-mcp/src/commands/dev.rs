//! `dev`

use crate::Failure;
use crate::cli::DevArgs;

pub(crate) fn run(_a: DevArgs) -> Result<(), Failure> {
    Err(Failure::new("not yet"))
}
