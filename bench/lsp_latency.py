"""How fast `tsl lsp` answers an editor, for BENCHMARKS.md.

Builds a script of about 1,100 lines (80 compiled functions, each with shapes, a data-dependent
size, a branch on an input size and checks), opens it in the release server over stdio and
measures:

- open -> diagnostics: from `didOpen` to `publishDiagnostics` (one analysis);
- keystroke -> diagnostics: from a `didChange` to the diagnostics of that version, which
  includes the server's 150 ms pause-in-typing wait (median and maximum of 10);
- hover: one request answered from the current analysis (median and maximum of 20).

    cargo build --release
    python3 bench/lsp_latency.py            # or: python3 bench/lsp_latency.py path/to/tsl

Standard library only.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def script():
    lines = ["use std.nn as nn", ""]
    for i in range(80):
        lines += [
            f"# Function {i}.",
            "@compile",
            f"fn f{i}(x: f32[n, 8], k: i64[m]) -> f32[?] {{",
            "    let y = nn.relu(x * 2.0 + 1.0)",
            "    let rows = y.sum(dim = 1)",
            "    let idx = k.nonzero()",
            "    if n > 2 {",
            "        print(rows)",
            "    }",
            "    let u = k.sum().item()",
            "    check u <= n",
            "    return rows.narrow(0, 0, u)",
            "}",
            "",
        ]
    lines.append("print(f0(ones(3, 8), tensor([1, 1])))")
    return "\n".join(lines) + "\n"


class Server:
    def __init__(self, binary):
        self.process = subprocess.Popen(
            [binary, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )

    def send(self, message):
        body = json.dumps(dict(message, jsonrpc="2.0")).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def receive(self):
        header = b""
        while not header.endswith(b"\r\n\r\n"):
            header += self.process.stdout.read(1)
        length = int(header.split(b"Content-Length: ")[1].split(b"\r\n")[0])
        return json.loads(self.process.stdout.read(length))

    def until(self, wanted):
        while True:
            message = self.receive()
            if wanted(message):
                return message


def published(version):
    return lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"][
        "version"
    ] == version


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/tsl"
    text = script()
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "big.tsl")
        with open(path, "w") as file:
            file.write(text)
        uri = "file://" + path
        server = Server(binary)
        server.send({"id": 1, "method": "initialize", "params": {"capabilities": {}}})
        server.until(lambda m: m.get("id") == 1)
        server.send({"method": "initialized", "params": {}})
        start = time.perf_counter()
        document = {"uri": uri, "languageId": "tsl", "version": 1, "text": text}
        server.send({"method": "textDocument/didOpen", "params": {"textDocument": document}})
        server.until(published(1))
        opened = (time.perf_counter() - start) * 1000
        edits = []
        for version in range(2, 12):
            start = time.perf_counter()
            change = {"text": text + f"\n# edit {version}\n"}
            server.send(
                {
                    "method": "textDocument/didChange",
                    "params": {
                        "textDocument": {"uri": uri, "version": version},
                        "contentChanges": [change],
                    },
                }
            )
            server.until(published(version))
            edits.append((time.perf_counter() - start) * 1000)
        hovers = []
        for request in range(20):
            start = time.perf_counter()
            position = {"line": 5 + 14 * request, "character": 9}
            server.send(
                {
                    "id": 100 + request,
                    "method": "textDocument/hover",
                    "params": {"textDocument": {"uri": uri}, "position": position},
                }
            )
            server.until(lambda m, id=100 + request: m.get("id") == id)
            hovers.append((time.perf_counter() - start) * 1000)
        server.send({"id": 2, "method": "shutdown"})
        server.until(lambda m: m.get("id") == 2)
        server.send({"method": "exit"})
        server.process.wait(10)
    print(f"{len(text.splitlines())} lines")
    print(f"open -> diagnostics:      {opened:7.1f} ms")
    print(
        f"keystroke -> diagnostics: {statistics.median(edits):7.1f} ms median, "
        f"{max(edits):.1f} ms max (150 ms pause included)"
    )
    print(
        f"hover:                    {statistics.median(hovers):7.2f} ms median, "
        f"{max(hovers):.2f} ms max"
    )


if __name__ == "__main__":
    main()
