#!/usr/bin/env python3
"""drive-http.py PORT N ERA(session|2026) [no-init]: N sequential tools/call add over one keep-alive connection (for callgrind-http.sh); $TOKEN, when set, goes in every request's Authorization header."""
import os, socket, sys
port, n, era = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
s = socket.create_connection(("127.0.0.1", port)); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
f = s.makefile("rb")
sid = None
def post(body, extra=""):
    global sid
    h = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n{extra}"
    if os.environ.get("TOKEN"): h += f"Authorization: Bearer {os.environ['TOKEN']}\r\n"
    if sid: h += f"Mcp-Session-Id: {sid}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
    s.sendall((h + "\r\n" + body).encode())
    length = 0
    while True:
        line = f.readline()
        if line in (b"\r\n", b""): break
        k, _, v = line.decode().partition(":")
        if k.lower() == "content-length": length = int(v)
        if k.lower() == "mcp-session-id": sid = v.strip()
    return f.read(length)
if era == "session" and len(sys.argv) < 5:
    post('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"d","version":"1"}}}')
    post('{"jsonrpc":"2.0","method":"notifications/initialized"}')
sys.stdout.write("ready\n"); sys.stdout.flush(); sys.stdin.readline()
for i in range(1, n + 1):
    if era == "session":
        r = post('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}' % i)
    else:
        r = post('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"add","arguments":{"a":2,"b":3}}}' % i,
                 "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: add\r\n")
    assert b'"structuredContent":{"result":5}' in r, r
print("done")
