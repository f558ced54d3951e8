use mcp_runtime::prelude::*;

#[resource("ui://counter/app.html", ui(permissions(camera, usb)))]
fn counter() -> &'static str {
    "<!doctype html>"
}

fn main() {}
