// Entry point: the output channel, the status bar, the commands, and the language client.
import * as vscode from "vscode";

import { Quokka } from "./quokka";
import { SHOW_OUTPUT_COMMAND, StatusBar } from "./status";

let current: Quokka | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel("Quokka", { log: true });
  const status = new StatusBar();
  const quokka = new Quokka(output, status);
  current = quokka;
  context.subscriptions.push(
    output,
    status,
    quokka,
    vscode.commands.registerCommand("quokka.verifyCurrentFile", () => quokka.verifyCurrentFile(false)),
    vscode.commands.registerCommand("quokka.verifyCurrentFileWithModel", () => quokka.verifyCurrentFile(true)),
    vscode.commands.registerCommand("quokka.restartServer", () => quokka.restart()),
    vscode.commands.registerCommand(SHOW_OUTPUT_COMMAND, () => quokka.showOutput()),
    vscode.window.onDidChangeActiveTextEditor(() => quokka.refreshActive()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("quokka.serverCommand")) {
        void quokka.restart();
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void quokka.restart()),
  );
  void quokka.start();
}

export async function deactivate(): Promise<void> {
  const quokka = current;
  current = undefined;
  await quokka?.stop();
}
