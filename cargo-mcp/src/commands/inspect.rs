//! `inspect`: the server's manifest or server card, printed by the server's own binary.

use crate::Failure;
use crate::cli::InspectArgs;

pub(crate) fn run(_a: InspectArgs) -> Result<(), Failure> {
    Err(Failure::new("not yet"))
}
