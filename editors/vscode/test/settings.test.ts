import assert from "node:assert/strict";
import { test } from "node:test";

import { hasModel, SERVER_KEYS, serverSettings } from "../src/settings";

test("only the server's keys reach it, unset values left out", () => {
  const section = {
    serverCommand: ["/x/quokka", "lsp"],
    trace: { server: "off" },
    timeout: 20,
    samples: null,
    model: "",
    dataModel: "",
    engines: [],
    verifyOn: "change",
  };
  assert.deepEqual(serverSettings(section), { timeout: 20, engines: [], verifyOn: "change" });
});

test("every setting the server knows is passed through", () => {
  const section = Object.fromEntries(SERVER_KEYS.map((key, i) => [key, i + 1]));
  assert.deepEqual(serverSettings(section), section);
  assert.equal(SERVER_KEYS.length, 12);
});

test("a missing section is null", () => {
  assert.equal(serverSettings(undefined), null);
  assert.equal(serverSettings(["timeout"]), null);
});

test("a model or an endpoint enables verify with model", () => {
  assert.equal(hasModel({ model: "", endpoint: "" }), false);
  assert.equal(hasModel({ model: "/models/q" }), true);
  assert.equal(hasModel({ endpoint: "http://127.0.0.1:8000/v1" }), true);
});
