// The LanguageClient for `quokka lsp`: its options, the middleware, and what to do when the server dies.
import * as vscode from "vscode";
import {
  CloseAction,
  type CloseHandlerResult,
  CodeLensRequest,
  ErrorAction,
  type ErrorHandler,
  type ErrorHandlerResult,
  LanguageClient,
  type LanguageClientOptions,
  type Middleware,
  RevealOutputChannelOn,
  type ServerOptions,
  State,
} from "vscode-languageclient/node";

import type { ServerCommand } from "./serverCommand";
import { serverSettings } from "./settings";
import { type FileStatus, statusFromLensTitle } from "./verdict";

export const CLIENT_ID = "quokka";
export const VERIFY_REQUEST = "quokka/verify";
const COPY_INVARIANT = "quokka.copyInvariant";
const SHOW_RESULT = "quokka.showResult";
const MAX_RESTARTS = 4;
const RESTART_WINDOW_MS = 3 * 60 * 1000;

/** What the client tells the extension. */
export interface ClientHooks {
  /** A verification finished and published its diagnostics for `uri`. */
  diagnosticsArrived(uri: vscode.Uri): void;
  /** The server's status lens for `uri` says this. */
  statusSeen(uri: vscode.Uri, status: FileStatus): void;
  /** The server stopped for good (it kept crashing). */
  serverDied(reason: string): void;
}

/** Errors while starting are reported by the extension's own notification (with a fix), not twice. */
export class QuokkaClient extends LanguageClient {
  startedOnce = false;

  override error(message: string, data?: unknown, showNotification?: boolean | "force"): void {
    super.error(message, data, this.startedOnce ? showNotification : false);
  }

  /** The state of the status lens on `main` of `uri`, asked from the server; undefined when it has none. */
  async lensStatus(uri: vscode.Uri): Promise<FileStatus | undefined> {
    if (this.state !== State.Running) {
      return undefined;
    }
    const textDocument = { uri: this.code2ProtocolConverter.asUri(uri) };
    const lenses = await this.sendRequest(CodeLensRequest.type, { textDocument });
    const title = (lenses ?? []).find((lens) => lens.command?.command === SHOW_RESULT)?.command?.title;
    return title === undefined ? undefined : statusFromLensTitle(title);
  }
}

class RestartPolicy implements ErrorHandler {
  private readonly restarts: number[] = [];

  constructor(
    private readonly client: () => QuokkaClient | undefined,
    private readonly hooks: ClientHooks,
  ) {}

  error(_error: Error, _message: unknown, count: number | undefined): ErrorHandlerResult {
    return { action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown };
  }

  closed(): CloseHandlerResult {
    if (this.client()?.startedOnce !== true) {
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    const now = Date.now();
    this.restarts.push(now);
    while (this.restarts.length > 0 && (this.restarts[0] ?? now) < now - RESTART_WINDOW_MS) {
      this.restarts.shift();
    }
    if (this.restarts.length > MAX_RESTARTS) {
      this.hooks.serverDied(`the server stopped ${this.restarts.length} times in 3 minutes`);
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    return { action: CloseAction.Restart, message: "The Quokka server stopped; restarting it.", handled: true };
  }
}

function middleware(hooks: ClientHooks): Middleware {
  return {
    workspace: {
      configuration: async (params, token, next) => {
        const answer = await next(params, token);
        if (!Array.isArray(answer)) {
          return answer;
        }
        return answer.map((value: unknown, i) => (params.items[i]?.section === "quokka" ? serverSettings(value) : value));
      },
      // `settings: null` makes the server pull the section, through `configuration` above
      didChangeConfiguration: (_sections, next) => next(undefined),
    },
    handleDiagnostics: (uri, diagnostics, next) => {
      next(uri, diagnostics);
      hooks.diagnosticsArrived(uri);
    },
    provideCodeLenses: async (document, token, next) => {
      const lenses = await next(document, token);
      const title = lenses?.find((lens) => lens.command?.command === SHOW_RESULT)?.command?.title;
      if (title !== undefined) {
        hooks.statusSeen(document.uri, statusFromLensTitle(title));
      }
      return lenses;
    },
    executeCommand: async (command, args: unknown[], next) => {
      if (command !== COPY_INVARIANT) {
        return next(command, args);
      }
      const text = String(args[0] ?? "");
      await vscode.env.clipboard.writeText(text);
      void vscode.window.showInformationMessage(`Quokka: copied ${text}`);
      return text;
    },
  };
}

export function createClient(
  server: ServerCommand,
  output: vscode.LogOutputChannel,
  hooks: ClientHooks,
): QuokkaClient {
  const executable = { command: server.command, args: [...server.args] };
  const serverOptions: ServerOptions = { run: executable, debug: executable };
  let client: QuokkaClient | undefined;
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "c" },
      { scheme: "untitled", language: "c" },
    ],
    synchronize: { configurationSection: "quokka" },
    outputChannel: output,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    initializationFailedHandler: () => false,
    errorHandler: new RestartPolicy(() => client, hooks),
    middleware: middleware(hooks),
  };
  client = new QuokkaClient(CLIENT_ID, "Quokka", serverOptions, clientOptions);
  return client;
}
