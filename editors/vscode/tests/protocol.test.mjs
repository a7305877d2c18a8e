// The protocol layer VS Code's client is built on (vscode-languageserver-protocol, under
// vscode-languageclient) against the real `tsl lsp`: initialize, open a document, receive
// its diagnostics, hover, shut down and exit with status 0. Run with `node --test tests/`;
// TSL_BIN names the binary (default: the debug build of this repository).

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  createProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-languageserver-protocol/node";

const here = dirname(fileURLToPath(import.meta.url));
const binary = process.env.TSL_BIN ?? resolve(here, "../../../target/debug/tsl");

test("a session with tsl lsp", { timeout: 60_000 }, async () => {
  assert.ok(existsSync(binary), `no tsl binary at ${binary}: build it with \`cargo build\` or set TSL_BIN`);
  const server = spawn(binary, ["lsp"], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((done) => server.on("exit", (code) => done(code)));
  const connection = createProtocolConnection(
    new StreamMessageReader(server.stdout),
    new StreamMessageWriter(server.stdin),
  );
  const published = new Promise((done) =>
    connection.onNotification("textDocument/publishDiagnostics", (params) => done(params)),
  );
  connection.listen();

  const init = await connection.sendRequest("initialize", {
    processId: process.pid,
    rootUri: null,
    capabilities: { general: { positionEncodings: ["utf-16"] } },
  });
  assert.equal(init.capabilities.positionEncoding, "utf-16");
  assert.equal(init.serverInfo.name, "tsl");
  await connection.sendNotification("initialized", {});

  const uri = pathToFileURL(resolve(here, "protocol_sample.tsl")).href;
  const text =
    "@compile\n" +
    "fn f(x: f32[n, 3]) -> f32[n] {\n" +
    "    let rows = x.sum(dim = 1)\n" +
    "    return rows + missing\n" +
    "}\n";
  await connection.sendNotification("textDocument/didOpen", {
    textDocument: { uri, languageId: "tsl", version: 1, text },
  });
  const diagnostics = await published;
  assert.equal(diagnostics.uri, uri);
  assert.equal(diagnostics.version, 1);
  const [problem] = diagnostics.diagnostics;
  assert.equal(problem.code, "name-error");
  assert.deepEqual(problem.range.start, { line: 3, character: 18 });

  const hover = await connection.sendRequest("textDocument/hover", {
    textDocument: { uri },
    position: { line: 2, character: 9 },
  });
  assert.match(hover.contents.value, /rows: f32\[n\]/);

  assert.equal(await connection.sendRequest("shutdown"), null);
  await connection.sendNotification("exit");
  assert.equal(await exited, 0);
  connection.dispose();
});
