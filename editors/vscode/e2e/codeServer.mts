// A code-server on 127.0.0.1 with the packaged extension installed, in a throwaway profile.
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

import type { Processes } from "./processes.mts";

export interface CodeServerPaths {
  readonly node: string; // Node 24, which code-server needs
  readonly codeServer: string;
  readonly vsix: string;
  readonly root: string; // the run's temporary folder
}

export const USER_SETTINGS = {
  "security.workspace.trust.enabled": false,
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "workbench.welcomePage.walkthroughs.openOnInstall": false,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "extensions.ignoreRecommendations": true,
  "chat.disableAIFeatures": true,
  "git.enabled": false,
  "editor.inlayHints.enabled": "on",
  "editor.minimap.enabled": false,
  "editor.hover.delay": 300,
  "window.restoreWindows": "none",
  "workbench.secondarySideBar.defaultVisibility": "hidden",
};

// code-server asks an extension gallery on the internet: point it at a closed loopback port instead
const NO_GALLERY = JSON.stringify({ serviceUrl: "http://127.0.0.1:9/gallery", itemUrl: "http://127.0.0.1:9/item" });

function writeJson(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value, null, 2));
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") {
    throw new Error("no free port");
  }
  return address.port;
}

async function waitHealthy(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) {
        return;
      }
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error(`code-server did not answer on ${url} within ${timeoutMs} ms`);
}

export class CodeServer {
  private readonly paths: CodeServerPaths;
  private readonly processes: Processes;
  private readonly dirs: { readonly userData: string; readonly extensions: string; readonly home: string };

  constructor(paths: CodeServerPaths, processes: Processes) {
    this.paths = paths;
    this.processes = processes;
    this.dirs = {
      userData: path.join(paths.root, "user-data"),
      extensions: path.join(paths.root, "extensions"),
      home: path.join(paths.root, "home"),
    };
  }

  private env(): NodeJS.ProcessEnv {
    const { home } = this.dirs;
    return {
      ...process.env,
      PATH: `${path.dirname(this.paths.node)}:${process.env.PATH ?? ""}`,
      XDG_CONFIG_HOME: path.join(home, "config"),
      XDG_DATA_HOME: path.join(home, "data"),
      XDG_CACHE_HOME: path.join(home, "cache"),
      EXTENSIONS_GALLERY: NO_GALLERY,
    };
  }

  private args(...rest: string[]): string[] {
    return ["--user-data-dir", this.dirs.userData, "--extensions-dir", this.dirs.extensions, ...rest];
  }

  async installExtension(): Promise<void> {
    writeJson(path.join(this.dirs.userData, "User", "settings.json"), USER_SETTINGS);
    await this.processes.run("install-extension", this.paths.codeServer,
      this.args("--install-extension", this.paths.vsix), { env: this.env() });
  }

  /** Start on a free loopback port, opening `folder`; resolves to the URL once it answers. */
  async start(folder: string): Promise<string> {
    const port = await freePort();
    const config = path.join(this.paths.root, "code-server.yaml");
    fs.writeFileSync(config, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
    this.processes.start("code-server", this.paths.codeServer, this.args(
      "--config", config, "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust",
      "--disable-getting-started-override", "--ignore-last-opened", folder,
    ), { env: this.env() });
    const url = `http://127.0.0.1:${port}`;
    await waitHealthy(url, 60_000);
    return url;
  }
}
