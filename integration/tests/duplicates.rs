//! Two tools with one name (in different modules, where the compiler cannot see the clash) are
//! reported at start-up with both locations.

use mcp_runtime::prelude::*;
use mcp_runtime::{BuildError, Server};

mod first {
    use super::*;

    #[tool(name = "lookup")]
    pub async fn lookup_by_id(id: u64) -> u64 {
        id
    }
}

mod second {
    use super::*;

    #[tool(name = "lookup")]
    pub async fn lookup_by_name(name: String) -> String {
        name
    }
}

#[test]
fn duplicate_names_fail_the_build_with_both_locations() {
    let err = Server::builder().build().unwrap_err();
    let BuildError::DuplicateTool { name, locations } = &err else {
        panic!("{err}")
    };
    assert_eq!(name, "lookup");
    assert_eq!(locations.len(), 2);
    // `file!()` as this package is compiled (relative to the workspace root).
    let at = |line: u32| format!("{}:{line}", file!());
    assert_eq!(locations, &[at(11), at(20)]);
    let message = err.to_string();
    assert!(
        message.contains("duplicate tool name `lookup`") && message.contains(" and "),
        "{message}"
    );
}

#[test]
fn filtering_one_out_resolves_the_clash() {
    let server = Server::builder()
        .tool_filter(|t| t.location.1 < 15)
        .build()
        .unwrap();
    assert_eq!(server.tool_names().collect::<Vec<_>>(), ["lookup"]);
}

#[test]
fn both_fns_stay_callable() {
    assert_eq!(tokio_test_block(first::lookup_by_id(7)), 7);
    assert_eq!(tokio_test_block(second::lookup_by_name("x".into())), "x");
}

fn tokio_test_block<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}
