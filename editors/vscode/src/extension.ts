// The TSL extension: starts `tsl lsp` and connects VS Code to it. Highlighting and editing
// rules come from the grammar and the language configuration in package.json; everything
// else (diagnostics, hover, definitions, completion, inlay hints, quick fixes) from the server.

import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
} from "vscode-languageclient/node";

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (change) => {
      if (change.affectsConfiguration("tsl.server")) {
        await stop();
        await start();
      }
    }),
  );
  await start();
}

export async function deactivate(): Promise<void> {
  await stop();
}

async function start(): Promise<void> {
  const settings = vscode.workspace.getConfiguration("tsl");
  const command = expandHome(settings.get<string>("server.path", "tsl") || "tsl");
  const extraArgs = settings.get<string[]>("server.extraArgs", []);
  const server: ServerOptions = {
    command,
    args: ["lsp", ...extraArgs],
  };
  const options: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "tsl" },
      { scheme: "untitled", language: "tsl" },
    ],
  };
  const started = new LanguageClient("tsl", "TSL", server, options);
  try {
    await started.start();
    client = started;
  } catch (error) {
    await started.dispose().catch(() => undefined);
    await missingServer(command, error);
  }
}

async function stop(): Promise<void> {
  const running = client;
  client = undefined;
  if (running && running.state !== State.Stopped) {
    await running.stop().catch(() => undefined);
  }
}

// Says clearly that `tsl` could not be started, and how to fix it.
async function missingServer(command: string, error: unknown): Promise<void> {
  const reason = error instanceof Error ? error.message : String(error);
  const choice = await vscode.window.showErrorMessage(
    `TSL: cannot start the language server \`${command} lsp\` (${reason}). ` +
      "Install TSL with `cargo install --path .` in its repository, or set " +
      "`tsl.server.path` to the `tsl` executable.",
    "Open Settings",
  );
  if (choice === "Open Settings") {
    await vscode.commands.executeCommand("workbench.action.openSettings", "tsl.server.path");
  }
}

function expandHome(path: string): string {
  const home = process.env.HOME ?? process.env.USERPROFILE;
  return home && path.startsWith("~/") ? home + path.slice(1) : path;
}
