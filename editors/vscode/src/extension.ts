// Scenarist in VS Code: starts `scenarist lsp` (the language server every editor uses)
// for the YAML files of the workspace and for the cases and world files (.csv, .jsonl)
// they read. Everything it shows comes from the server: lint's diagnostics as you type,
// completion, hover, go to definition, references, the outline and quick fixes.
// Red Hat's YAML extension, when installed, keeps giving the JSON Schema's help beside it.

import { ExtensionContext, workspace } from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";

let client: LanguageClient | undefined;

export async function activate(context: ExtensionContext): Promise<void> {
  const settings = workspace.getConfiguration("scenarist");
  const server: ServerOptions = {
    command: settings.get<string>("command", "scenarist"),
    args: settings.get<string[]>("args", ["lsp"]),
    transport: TransportKind.stdio,
  };
  const options: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "yaml" },
      { scheme: "file", pattern: "**/*.{csv,jsonl}" },
    ],
    synchronize: {
      // a suite changed on disk (a checkout, another editor): its open files are checked again
      fileEvents: workspace.createFileSystemWatcher("**/{scenarist.yaml,*.csv,*.jsonl}"),
    },
  };
  client = new LanguageClient("scenarist", "Scenarist", server, options);
  context.subscriptions.push(client);
  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
