use mcp_runtime::prelude::*;

struct Opaque;

// Deserialize but not JsonSchema.
#[derive(serde::Deserialize, Default)]
struct HalfWay;

// Each bad parameter is one error at its type, also with a default or inside another type.
#[tool]
async fn takes_several(
    a: Opaque,
    #[arg(default)] b: HalfWay,
    c: Vec<Opaque>,
    ok: i64,
) -> String {
    let _ = (a, b, c, ok);
    String::new()
}

fn main() {}
