#!/usr/bin/env python3
"""Writes the hand-made seed inputs (from the bad-input corpus of
/work/shared/research/reliability-security.md section 4) into corpus/<target>/seed-*.
The committed corpus is these plus what `cargo fuzz cmin` kept of campaign finds."""
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "corpus")

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}


def req(id, method, params=None):
    m = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        m["params"] = params
    return json.dumps(m, separators=(",", ":"))


def note(method, params=None):
    m = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        m["params"] = params
    return json.dumps(m, separators=(",", ":"))


# Single messages: framing cases 1-12 and MCP cases 14-24.
MESSAGES = [
    '{"jsonrpc":"2.0","id":1,"method":"ping"',
    '{"jsonrpc":"2.0","id":1,"method":"p\xc3\x28"}',
    '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\\ud800"}}',
    '{"jsonrpc":"2.0","id":1,"method":"ping","params":' + "[" * 200 + "]" * 200 + "}",
    '{"jsonrpc":"2.0","id":1e999,"method":"ping"}',
    '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
    '{"jsonrpc":"2.0","id":true,"method":"ping"}',
    '{"jsonrpc":"2.0","id":{},"method":"ping"}',
    '{"jsonrpc":"2.0","id":null,"method":"ping"}',
    '{"jsonrpc":"1.0","id":1,"method":"ping"}',
    '{"id":1,"method":"ping"}',
    '{"jsonrpc":"2.0","id":1,"method":42}',
    '{"jsonrpc":"2.0","id":1}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call"}',
    '{"jsonrpc":"2.0","id":1,"Method":"tools/call","method":"tools/list"}',
    '{"jsonrpc":"2.0","id":1,"method\\u0000":"tools/call"}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/list","param\xc5\xbf":{}}',
    '{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}',
    '[]',
    '[' + req(1, "ping") + ']',
    '[' + req(1, "ping") + ',' + note("notifications/initialized") + ',' + req(1, "ping") + ',[1]]',
    '{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}',
    req(1, "tools/list", [1, 2]),
    req("a", "foo/bar"),
    req(2, "rpc.discover"),
    note("foo/bar"),
    note("notifications/cancelled", {"requestId": 99}),
    req(3, "tools/call", {"name": "nope", "arguments": {}}),
    req(3, "tools/call", {"name": "x" * 5000}),
    req(4, "tools/call", {"name": "primitives", "arguments": "x"}),
    req(4, "tools/call", {"arguments": {}}),
    req(5, "tools/call", {"name": "primitives", "arguments": {"a": "one"}}),
    req(6, "tools/call", {"name": "fragile", "arguments": {"n": 7}}),
    req(7, "tools/call", {"name": "chatty", "arguments": {"steps": 3}, "_meta": {"progressToken": "t"}}),
    req(8, "resources/read", {"uri": "file:///nope"}),
    req(8, "resources/read", {}),
    req(8, "resources/read", {"uri": "file:///notes/..%2Fetc%2Fpasswd"}),
    req(9, "resources/list", {"cursor": "garbage"}),
    req(9, "tools/call", {"name": "primitives", "arguments": {}, "_meta": {"progressToken": {}}}),
    req(10, "logging/setLevel", {"level": "loud"}),
    req(11, "tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
    req(11, "tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": "1999-01-01", "io.modelcontextprotocol/clientCapabilities": {}}}),
    req(12, "tools/call", {"name": "primitives", "arguments": {"a": 1, "flag": True, "ratio": 0.5, "small": 3}, "_meta": META}),
    req(12, "tools/call", {"name": "primitives", "requestState": "v1.e30.AAAA", "inputResponses": {}, "_meta": META}),
    req(13, "prompts/get", {"name": "greet", "arguments": {"name": "x"}}),
    req(14, "completion/complete", {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "a"}}),
    req(15, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}}),
    json.dumps({"jsonrpc": "2.0", "id": 77, "result": {}}),
    json.dumps({"jsonrpc": "2.0", "id": 77, "error": {"code": 1, "message": "m"}}),
    json.dumps({"jsonrpc": "2.0", "id": 77, "result": {}, "error": {}}),
    "hello",
    "\ufeff" + req(1, "ping"),
]


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    h = hashlib.sha1(data).hexdigest()[:12]
    with open(os.path.join(d, f"seed-{name}-{h}"), "wb") as f:
        f.write(data)


def main():
    for i, m in enumerate(MESSAGES):
        write("envelope", f"msg{i}", m)
    # dispatch: a mode byte (0 none, 1..4 initialize at a session version) and lines.
    for mode in range(5):
        write("dispatch", f"mode{mode}", bytes([mode]) + "\n".join(MESSAGES).encode("utf-8", "surrogatepass"))
    write("dispatch", "inflight-dup", b"\x01" + "\n".join([
        req(1, "tools/call", {"name": "chatty", "arguments": {"steps": 4}}),
        req(1, "tools/call", {"name": "chatty", "arguments": {"steps": 1}}),
        note("notifications/cancelled", {"requestId": 1}),
        req(2, "tools/call", {"name": "blocking", "arguments": {"text": "t", "value": [1]}}),
    ]).encode())
    write("dispatch", "batch-0326", b"\x03" + ("[" + ",".join([req(1, "ping"), req(2, "tools/list"), note("x")]) + "]").encode())
    # era_headers: header lines, blank line, body.
    def post(headers, body):
        return "".join(f"{k}: {v}\n" for k, v in headers) + "\n" + body
    call = req(1, "tools/call", {"name": "primitives", "arguments": {"a": 1, "flag": True, "ratio": 1.0, "small": 1}, "_meta": META})
    good = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", "primitives")]
    write("era_headers", "ok", post(good, call))
    write("era_headers", "b64", post([good[0], good[1], ("mcp-name", "=?base64?cHJpbWl0aXZlcw==?=")], call))
    write("era_headers", "mismatch", post([("mcp-protocol-version", "2025-11-25"), ("mcp-method", "TOOLS/LIST")], call))
    write("era_headers", "missing-name", post(good[:2], call))
    write("era_headers", "read", post([good[0], ("mcp-method", "resources/read"), ("mcp-name", "file:///notes/a")],
                                      req(2, "resources/read", {"uri": "file:///notes/a", "_meta": META})))
    write("era_headers", "nocaps", post(good, req(3, "tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}})))
    write("era_headers", "badver", post(good, req(3, "tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": 5, "io.modelcontextprotocol/clientCapabilities": {}}})))
    write("era_headers", "level", post(good, req(3, "tools/list", {"_meta": dict(META, **{"io.modelcontextprotocol/logLevel": "loud"})})))
    # uri_template: odd first byte = own template on the first line; even = a built-in one.
    for i, (t, u) in enumerate([
        ("file:///{+path}", "file:///../etc/passwd"),
        ("file:///{+path}", "file:///..%2Fetc%2Fpasswd"),
        ("file:///{+path}", "file:///%2E%2E/%00/..%5C/C:foo"),
        ("users://{org}/{user}/repos{/repo*}", "users://a/b/repos/x/y/z"),
        ("search://items{?q,limit}", "search://items?limit=3&q=%C3%28"),
        ("x://{a}{b}{c}", "x://" + "a" * 100),
        ("{/id*}", "/" + "," * 2000),
        ("x://{a}{b}{c}{d}{e}{f}", "x://" + "ab" * 200),
        ("{#x,y}{.z*}{;p}{&q}", "#a,b.c.d;p=1&q=2"),
        ("{unclosed", "x"),
    ]):
        write("uri_template", f"own{i}", bytes([1]) + f"{t}\n{u}".encode())
    for i in range(10):
        write("uri_template", f"builtin{i}", bytes([2 * i]) + b"file:///notes/a%20b")
    # tool_args: the first byte picks the tool (bit 7: 2026-07-28).
    for i, a in enumerate([
        {"a": 1, "b": "x", "flag": True, "ratio": 0.5, "small": 255},
        {"a": 9223372036854775808, "flag": True, "ratio": 1e308, "small": 256},
        {"tags": ["a"], "scores": {"x": 1}, "pair": [1, "y"]},
        {"tags": [], "scores": {}, "times": None},
        {"mode": "fast", "at": {"x": 1, "y": 2}, "shape": {"kind": "circle", "r": 1}, "Renamed": None},
        {"mode": "slow", "at": {"x": 1, "y": 2}, "shape": {"kind": "rect", "w": 1, "h": 2}, "renamed": []},
        {"text": "t", "value": {"deep": [[[]]]}},
    ]):
        write("tool_args", f"args{i}", bytes([i % 4, ]) + json.dumps(a).encode())
    write("tool_args", "dup", bytes([0]) + b'{"a":1,"a":2,"flag":true,"ratio":1,"small":1}')
    write("tool_args", "escaped", bytes([0x80]) + b'{"\\u0061":1,"flag":true,"ratio":1,"small":1}')
    write("tool_args", "null", bytes([1]) + b"null")
    write("tool_args", "array", bytes([2]) + b"[1]")
    # form: hand-written requestedSchema shapes.
    for i, f in enumerate([
        {"type": "object", "properties": {"name": {"type": "string", "minLength": 1, "format": "email"},
                                          "n": {"type": ["integer", "null"], "minimum": 0},
                                          "ok": {"type": "boolean", "default": True}},
         "required": ["name"]},
        {"type": "object", "properties": {"c": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]}}},
        {"type": "object", "properties": {"c": {"oneOf": [{"const": "a", "title": "A"}, {"const": "b", "description": "B"}]}}},
        {"type": "object", "properties": {"c": {"type": "array", "items": {"type": "string", "enum": ["a"]}}}},
        {"type": "object", "properties": {"c": {"type": "object"}}},
        {"type": "object", "properties": {"c": {"$ref": "#/$defs/X"}}, "$defs": {"X": {"type": "string"}}},
        {"type": "object", "required": ["missing"]},
        {"type": "string"},
    ]):
        write("form", f"form{i}", json.dumps(f))


if __name__ == "__main__":
    sys.exit(main())
