import assert from "node:assert/strict";
import { test } from "node:test";

import {
  checkRunnable,
  findOnPath,
  fromSetting,
  resolveServerCommand,
  ServerNotFound,
} from "../src/serverCommand";

const only = (...files: string[]) => (file: string) => files.includes(file);

test("the setting wins over every other source", () => {
  const server = resolveServerCommand({
    setting: ["/opt/q/bin/quokka", "lsp", "--no-cache"],
    python: "/env/bin/python",
    pathVariable: "/usr/bin",
    isExecutable: only("/env/bin/quokka", "/usr/bin/quokka"),
  });
  assert.equal(server.command, "/opt/q/bin/quokka");
  assert.deepEqual(server.args, ["lsp", "--no-cache"]);
});

test("an empty setting means: the Python environment's quokka, then PATH", () => {
  const sources = { setting: [], python: "/env/bin/python", pathVariable: "/a:/usr/bin" };
  const inEnv = resolveServerCommand({ ...sources, isExecutable: only("/env/bin/quokka", "/usr/bin/quokka") });
  assert.equal(inEnv.command, "/env/bin/quokka");
  assert.deepEqual(inEnv.args, ["lsp"]);
  const onPath = resolveServerCommand({ ...sources, isExecutable: only("/usr/bin/quokka") });
  assert.equal(onPath.command, "/usr/bin/quokka");
  assert.equal(onPath.origin, "PATH");
});

test("no quokka anywhere is a ServerNotFound naming where it looked", () => {
  const sources = { setting: [], python: "/env/bin/python", pathVariable: "/usr/bin", isExecutable: only() };
  assert.throws(() => resolveServerCommand(sources), (error: unknown) => {
    return error instanceof ServerNotFound && /PATH/.test(error.message) && /\/env\/bin\/python/.test(error.message);
  });
});

test("a malformed setting is reported", () => {
  assert.equal(fromSetting([]), undefined);
  assert.equal(fromSetting(undefined), undefined);
  assert.throws(() => fromSetting([1, 2]), ServerNotFound);
  assert.throws(() => fromSetting([""]), ServerNotFound);
});

test("PATH lookup takes the first directory that has the program", () => {
  assert.equal(findOnPath("quokka", "/a::/b:/c", only("/b/quokka", "/c/quokka"), "linux"), "/b/quokka");
  assert.equal(findOnPath("quokka", undefined, only("/b/quokka"), "linux"), undefined);
});

test("a command that cannot run is caught before starting", () => {
  const server = { command: "/nope/quokka", args: ["lsp"], origin: "the setting" };
  assert.throws(() => checkRunnable(server, "/usr/bin", only()), /is not an executable program/);
  checkRunnable({ ...server, command: "quokka" }, "/usr/bin", only("/usr/bin/quokka"));
});
