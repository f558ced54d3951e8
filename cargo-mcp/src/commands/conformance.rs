//! `test conformance`

use crate::Failure;
use crate::cli::ConformanceArgs;

pub(crate) fn run(_a: ConformanceArgs) -> Result<(), Failure> {
    Err(Failure::new("not yet"))
}
