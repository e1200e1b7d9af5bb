// The extension's state: the running client, its start and restart, the verify commands.
import * as path from "node:path";
import * as vscode from "vscode";
import { LSPErrorCodes, ResponseError, State } from "vscode-languageclient/node";

import { type ClientHooks, createClient, type QuokkaClient, VERIFY_REQUEST } from "./client";
import { pythonInterpreter } from "./python";
import {
  checkRunnable,
  describe,
  fromSetting,
  isExecutableFile,
  resolveServerCommand,
  type ServerCommand,
  ServerNotFound,
} from "./serverCommand";
import { hasModel } from "./settings";
import type { StatusBar } from "./status";
import { answerLines, RUNNING, statusFromAnswer, type VerifyAnswer } from "./verdict";

const REFRESH_DELAY_MS = 150;
const STOP_TIMEOUT_MS = 3000;
const INSTALL_HINT =
  'Install Quokka in your Python environment ("pip install quokka-verifier"), or set "quokka.serverCommand" ' +
  'to the command that runs "quokka lsp".';

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class Quokka implements vscode.Disposable, ClientHooks {
  private client: QuokkaClient | undefined;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly status: StatusBar,
  ) {}

  // ------------------------------------------------------------------ lifecycle

  start(): Promise<void> {
    return this.inTurn(() => this.launch());
  }

  private async launch(): Promise<void> {
    this.status.setServerProblem(undefined);
    let server: ServerCommand;
    try {
      server = await this.serverCommand();
    } catch (error) {
      this.startFailed(undefined, error);
      return;
    }
    this.output.info(`starting the language server: ${describe(server)} (from ${server.origin})`);
    const client = createClient(server, this.output, this);
    this.client = client;
    try {
      await client.start();
      client.startedOnce = true;
      this.refreshActive();
    } catch (error) {
      this.client = undefined;
      await client.dispose(STOP_TIMEOUT_MS).catch(() => undefined);
      this.startFailed(server, error);
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client !== undefined && client.state !== State.Stopped) {
      await client.stop(STOP_TIMEOUT_MS).catch((error: unknown) => this.output.warn(`stop: ${errorText(error)}`));
    }
    await client?.dispose(STOP_TIMEOUT_MS).catch(() => undefined);
  }

  /** Stop and start again. */
  restart(): Promise<void> {
    return this.inTurn(async () => {
      this.output.info("restarting the language server");
      await this.stop();
      await this.launch();
    });
  }

  /** Starts and restarts run one after the other, never two clients at once. */
  private inTurn(task: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(task, task);
    return this.queue;
  }

  showOutput(): void {
    this.output.show(true);
  }

  dispose(): void {
    this.timers.forEach((timer) => clearTimeout(timer));
    void this.stop();
  }

  private async serverCommand(): Promise<ServerCommand> {
    const resource = vscode.window.activeTextEditor?.document.uri;
    const setting = this.serverCommandSetting(resource);
    const python = fromSetting(setting) === undefined ? await pythonInterpreter(resource, this.output) : undefined;
    const pathVariable = process.env.PATH;
    const server = resolveServerCommand({ setting, python, pathVariable, isExecutable: isExecutableFile });
    checkRunnable(server, pathVariable, isExecutableFile);
    return server;
  }

  /** `quokka.serverCommand`; in an untrusted workspace only the user's own value counts. */
  private serverCommandSetting(resource: vscode.Uri | undefined): unknown {
    const config = vscode.workspace.getConfiguration("quokka", resource);
    if (vscode.workspace.isTrusted) {
      return config.get<unknown>("serverCommand");
    }
    return config.inspect<unknown>("serverCommand")?.globalValue;
  }

  private startFailed(server: ServerCommand | undefined, error: unknown): void {
    const command = server === undefined ? "" : ` (${describe(server)})`;
    const reason = error instanceof ServerNotFound
      ? error.message
      : `it stopped while starting (${errorText(error)}); its messages are in the Quokka output`;
    this.output.error(`cannot start the language server${command}: ${reason}`);
    this.status.setServerProblem("the language server is not running");
    const message = `Quokka: cannot start the language server${command}: ${reason}. ${INSTALL_HINT}`;
    void vscode.window.showErrorMessage(message, "Open Settings", "Show Output", "Retry").then((choice) => {
      if (choice === "Open Settings") {
        void vscode.commands.executeCommand("workbench.action.openSettings", "quokka.serverCommand");
      } else if (choice === "Show Output") {
        this.showOutput();
      } else if (choice === "Retry") {
        void this.restart();
      }
    });
  }

  // ------------------------------------------------------------------ hooks from the client

  diagnosticsArrived(uri: vscode.Uri): void {
    this.refreshSoon(uri);
  }

  statusSeen(uri: vscode.Uri, status: ReturnType<typeof statusFromAnswer>): void {
    this.status.set(uri, status);
  }

  serverDied(reason: string): void {
    this.output.error(`the language server is not restarted again: ${reason}`);
    this.status.setServerProblem(`the language server stopped: ${reason}`);
    const message = `Quokka: the language server stopped (${reason}). See the output for its error.`;
    void vscode.window.showErrorMessage(message, "Show Output", "Restart Server").then((choice) => {
      if (choice === "Show Output") {
        this.showOutput();
      } else if (choice === "Restart Server") {
        void this.restart();
      }
    });
  }

  refreshActive(): void {
    const doc = vscode.window.activeTextEditor?.document;
    if (doc?.languageId === "c") {
      this.refreshSoon(doc.uri);
    }
  }

  /** Ask the server's status lens for `uri`, once the current burst of events is over. */
  private refreshSoon(uri: vscode.Uri): void {
    const key = uri.toString();
    clearTimeout(this.timers.get(key));
    this.timers.set(key, setTimeout(() => {
      this.timers.delete(key);
      void this.refresh(uri);
    }, REFRESH_DELAY_MS));
  }

  private async refresh(uri: vscode.Uri): Promise<void> {
    try {
      const status = await this.client?.lensStatus(uri);
      if (status !== undefined) {
        this.status.set(uri, status);
      }
    } catch (error) {
      this.output.debug(`status of ${uri.toString()}: ${errorText(error)}`);
    }
  }

  // ------------------------------------------------------------------ commands

  async verifyCurrentFile(withModel: boolean): Promise<void> {
    const doc = vscode.window.activeTextEditor?.document;
    if (doc === undefined || doc.languageId !== "c") {
      void vscode.window.showWarningMessage("Quokka: open a C file to verify it.");
      return;
    }
    const client = this.client;
    if (client === undefined || client.state !== State.Running) {
      this.notRunning();
      return;
    }
    if (withModel && !hasModel(vscode.workspace.getConfiguration("quokka", doc.uri))) {
      this.noModel();
      return;
    }
    await this.verify(client, doc.uri, withModel);
  }

  private async verify(client: QuokkaClient, uri: vscode.Uri, withModel: boolean): Promise<void> {
    const name = path.basename(uri.path);
    this.status.set(uri, RUNNING);
    const textDocument = { uri: client.code2ProtocolConverter.asUri(uri) };
    try {
      const answer = await client.sendRequest<VerifyAnswer>(VERIFY_REQUEST, { textDocument, force: true, withModel });
      this.status.set(uri, statusFromAnswer(answer));
      answerLines(name, answer).forEach((line) => this.output.info(line));
    } catch (error) {
      const changed = error instanceof ResponseError && error.code === LSPErrorCodes.ContentModified;
      const message = changed ? `${name} changed while it was verified` : `verifying ${name} failed: ${errorText(error)}`;
      this.output.info(message);
      this.refreshSoon(uri);
    }
  }

  private notRunning(): void {
    void vscode.window.showErrorMessage("Quokka: the language server is not running.", "Restart Server", "Show Output")
      .then((choice) => {
        if (choice === "Restart Server") {
          void this.restart();
        } else if (choice === "Show Output") {
          this.showOutput();
        }
      });
  }

  private noModel(): void {
    const message = 'Quokka: set "quokka.model" (a model directory) or "quokka.endpoint" to verify with a model.';
    void vscode.window.showWarningMessage(message, "Open Settings").then((choice) => {
      if (choice === "Open Settings") {
        void vscode.commands.executeCommand("workbench.action.openSettings", "quokka.model");
      }
    });
  }
}
