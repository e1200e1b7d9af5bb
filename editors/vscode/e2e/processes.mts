// Child processes of the test, each in its own process group, all stopped by pid at the end.
import { type ChildProcess, spawn, type SpawnOptions } from "node:child_process";
import { once } from "node:events";
import * as fs from "node:fs";
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

const GRACE_MS = 3000;

export class Processes {
  private readonly started: ChildProcess[] = [];
  private readonly logDir: string;

  constructor(logDir: string) {
    this.logDir = logDir;
  }

  /** Start `command` in a new process group, its output into `<logDir>/<name>.log`. */
  start(name: string, command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
    const log = fs.openSync(path.join(this.logDir, `${name}.log`), "a");
    const child = spawn(command, args, { ...options, detached: true, stdio: ["ignore", log, log] });
    fs.closeSync(log);
    this.started.push(child);
    return child;
  }

  /** Run `command` to its end; throws with the log's tail when it fails. */
  async run(name: string, command: string, args: readonly string[], options: SpawnOptions = {}): Promise<void> {
    const child = this.start(name, command, args, options);
    const [code] = (await once(child, "exit")) as [number | null];
    if (code !== 0) {
      const log = fs.readFileSync(path.join(this.logDir, `${name}.log`), "utf8");
      throw new Error(`${name} exited with ${String(code)}:\n${log.slice(-2000)}`);
    }
  }

  /** SIGTERM to each group started, SIGKILL to what is left after a grace period. */
  async stopAll(): Promise<void> {
    const groups = this.started.map((child) => child.pid).filter((pid): pid is number => pid !== undefined);
    groups.forEach((pid) => signalGroup(pid, "SIGTERM"));
    const deadline = Date.now() + GRACE_MS;
    while (groups.some(groupAlive) && Date.now() < deadline) {
      await sleep(100);
    }
    groups.filter(groupAlive).forEach((pid) => signalGroup(pid, "SIGKILL"));
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone already
  }
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Pids of live processes whose command line mentions `marker` (a path only this run uses). */
export function processesMentioning(marker: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) {
      continue;
    }
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (cmdline.includes(marker)) {
        found.push(Number(entry));
      }
    } catch {
      // ended meanwhile
    }
  }
  return found;
}

/** Kill, by pid, what escaped its group (e.g. a verifier in a session of its own); returns their pids. */
export function killStragglers(marker: string): number[] {
  const left = processesMentioning(marker);
  for (const pid of left) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // ended meanwhile
    }
  }
  return left;
}
