// The status-bar item: the active C file's verdict (✓ / ✗ / ? / spinner); a click shows the output.
import * as vscode from "vscode";

import { type FileStatus, NO_STATUS, statusBarText } from "./verdict";

export const SHOW_OUTPUT_COMMAND = "quokka.showOutput";

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly byUri = new Map<string, FileStatus>();
  private readonly listeners: vscode.Disposable[] = [];
  private serverProblem: string | undefined;

  constructor() {
    this.item = vscode.window.createStatusBarItem("quokka.status", vscode.StatusBarAlignment.Right, 100);
    this.item.name = "Quokka";
    this.item.command = SHOW_OUTPUT_COMMAND;
    this.listeners.push(
      vscode.window.onDidChangeActiveTextEditor(() => this.render()),
      vscode.workspace.onDidCloseTextDocument((doc) => this.forget(doc.uri)),
    );
    this.render();
  }

  set(uri: vscode.Uri, status: FileStatus): void {
    this.byUri.set(uri.toString(), status);
    this.render();
  }

  forget(uri: vscode.Uri): void {
    this.byUri.delete(uri.toString());
    this.render();
  }

  /** A server that is not running: shown on every C file until it runs again. */
  setServerProblem(problem: string | undefined): void {
    this.serverProblem = problem;
    this.render();
  }

  private render(): void {
    const doc = vscode.window.activeTextEditor?.document;
    if (doc === undefined || doc.languageId !== "c") {
      this.item.hide();
      return;
    }
    if (this.serverProblem !== undefined) {
      this.item.text = "$(error) Quokka";
      this.item.tooltip = `Quokka: ${this.serverProblem} (click for the output)`;
      this.item.show();
      return;
    }
    const status = this.byUri.get(doc.uri.toString()) ?? NO_STATUS;
    this.item.text = status.kind === "none" ? "Quokka" : statusBarText(status);
    this.item.tooltip = `Quokka: ${status.detail || "not verified yet"} (click for the output)`;
    this.item.show();
  }

  dispose(): void {
    this.listeners.forEach((listener) => listener.dispose());
    this.item.dispose();
  }
}
