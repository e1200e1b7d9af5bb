// Which command starts `quokka lsp`: the setting, the Python environment's, or `quokka` on PATH.
import * as fs from "node:fs";
import * as path from "node:path";

export interface ServerCommand {
  readonly command: string;
  readonly args: readonly string[];
  /** Where the command came from, for messages. */
  readonly origin: string;
}

export type IsExecutable = (file: string) => boolean;

export class ServerNotFound extends Error {}

export function isExecutableFile(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** `quokka.serverCommand` as a command, or undefined when it is unset (an empty list). */
export function fromSetting(value: unknown): ServerCommand | undefined {
  if (!Array.isArray(value) || value.length === 0) {
    return undefined;
  }
  if (!value.every((part): part is string => typeof part === "string") || value[0] === "") {
    throw new ServerNotFound('"quokka.serverCommand" must be a list of strings, the program first');
  }
  return { command: value[0], args: value.slice(1), origin: "the setting quokka.serverCommand" };
}

function executableNames(name: string, platform: NodeJS.Platform): string[] {
  return platform === "win32" ? [`${name}.exe`, `${name}.cmd`, name] : [name];
}

/** `name` in the directories of `pathVariable`, as a shell would find it. */
export function findOnPath(
  name: string,
  pathVariable: string | undefined,
  isExecutable: IsExecutable,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  const separator = platform === "win32" ? ";" : ":";
  for (const dir of (pathVariable ?? "").split(separator)) {
    if (dir === "") {
      continue;
    }
    for (const file of executableNames(name, platform)) {
      const candidate = path.join(dir, file);
      if (isExecutable(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

/** The `quokka` script installed beside a Python interpreter (its environment's bin or Scripts). */
export function besideInterpreter(
  python: string,
  isExecutable: IsExecutable,
  platform: NodeJS.Platform = process.platform,
): ServerCommand | undefined {
  const found = findOnPath("quokka", path.dirname(python), isExecutable, platform);
  if (found === undefined) {
    return undefined;
  }
  return { command: found, args: ["lsp"], origin: `the Python environment of ${python}` };
}

export interface Sources {
  readonly setting: unknown;
  readonly python: string | undefined;
  readonly pathVariable: string | undefined;
  readonly isExecutable: IsExecutable;
}

/** The server command from the first source that has one; throws ServerNotFound when none has. */
export function resolveServerCommand(sources: Sources): ServerCommand {
  const configured = fromSetting(sources.setting);
  if (configured !== undefined) {
    return configured;
  }
  const python = sources.python;
  const inEnvironment = python === undefined ? undefined : besideInterpreter(python, sources.isExecutable);
  if (inEnvironment !== undefined) {
    return inEnvironment;
  }
  const onPath = findOnPath("quokka", sources.pathVariable, sources.isExecutable);
  if (onPath !== undefined) {
    return { command: onPath, args: ["lsp"], origin: "PATH" };
  }
  const where = python === undefined ? "" : ` nor beside the Python interpreter ${python}`;
  throw new ServerNotFound(`no \`quokka\` program on PATH${where}`);
}

/** Whether the program of `server` can be run: found on PATH, or an executable file. */
export function checkRunnable(server: ServerCommand, pathVariable: string | undefined, isExecutable: IsExecutable): void {
  const { command } = server;
  const found = command.includes("/") || command.includes("\\")
    ? isExecutable(command)
    : findOnPath(command, pathVariable, isExecutable) !== undefined;
  if (!found) {
    throw new ServerNotFound(`${command} (from ${server.origin}) is not an executable program`);
  }
}

export function describe(server: ServerCommand): string {
  return [server.command, ...server.args].join(" ");
}
