// The VS Code side of Argus: starts argus-lsp over stdio and keeps the
// server's target architecture and -D values in step with the settings.
import { accessSync, constants } from "fs";
import { homedir } from "os";
import { delimiter } from "path";
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";
import { ArgusSettings, Finder, locateServer, notFoundMessage, serverCommand, serverSettings } from "./config";

let client: LanguageClient | undefined;

function readSettings(): ArgusSettings {
  const c = vscode.workspace.getConfiguration("argus");
  return {
    serverPath: c.get("server.path"),
    serverArgs: c.get("server.args"),
    target: c.get("target"),
    defines: c.get("defines"),
    registerHints: c.get("inlayHints.registers"),
    workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
  };
}

const finder: Finder = {
  isExecutable(path: string): boolean {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  },
  pathDirs: (process.env.PATH ?? "").split(delimiter),
  home: homedir(),
};

function createClient(output: vscode.OutputChannel, command: string, args: string[]): LanguageClient {
  const settings = readSettings();
  const executable = { command, args, transport: TransportKind.stdio };
  const serverOptions: ServerOptions = { run: executable, debug: executable };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file", language: "argus" }, { scheme: "untitled", language: "argus" }],
    outputChannel: output,
    initializationOptions: serverSettings(settings).argus,
  };
  return new LanguageClient("argus", "Argus Language Server", serverOptions, clientOptions);
}

async function pushConfiguration(): Promise<void> {
  if (!client || !client.isRunning()) return;
  await client.sendNotification("workspace/didChangeConfiguration", { settings: serverSettings(readSettings()) });
}

async function start(output: vscode.OutputChannel): Promise<void> {
  const location = locateServer(readSettings(), finder);
  if (location.command === undefined) {
    void vscode.window.showErrorMessage(notFoundMessage(location.looked));
    return;
  }
  output.appendLine(`Argus: starting ${location.command} (${location.foundIn})`);
  client = createClient(output, location.command, location.args);
  try {
    await client.start();
    await pushConfiguration();
  } catch (error) {
    const { command } = serverCommand(readSettings());
    void vscode.window.showErrorMessage(
      `Argus: could not start the language server '${command}' (set "argus.server.path"): ${String(error)}`,
    );
  }
}

async function stop(): Promise<void> {
  const running = client;
  client = undefined;
  if (!running) return;
  try {
    await running.stop();
  } catch {
    // A client whose server never started cannot be stopped; nothing is left to clean up.
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("Argus");
  context.subscriptions.push(output);
  context.subscriptions.push(
    vscode.commands.registerCommand("argus.restartServer", async () => {
      await stop();
      await start(output);
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("argus.server")) {
        // A new path or new arguments need a new process.
        await stop();
        await start(output);
      } else if (event.affectsConfiguration("argus.target") || event.affectsConfiguration("argus.defines") ||
                 event.affectsConfiguration("argus.inlayHints")) {
        await pushConfiguration();
      }
    }),
  );
  await start(output);
}

export function deactivate(): Promise<void> {
  return stop();
}
