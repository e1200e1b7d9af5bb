import assert from "node:assert/strict";
import { test } from "node:test";

import { answerLines, statusBarText, statusFromAnswer, statusFromLensTitle } from "../src/verdict";

test("the server's lens titles map to verdicts", () => {
  assert.deepEqual(statusFromLensTitle("✓ verified in 0.5 s"), { kind: "verified", detail: "verified in 0.5 s" });
  assert.deepEqual(statusFromLensTitle("✗ violation (line 12)"), { kind: "failed", detail: "violation (line 12)" });
  assert.equal(statusFromLensTitle("✗ not a valid program").kind, "failed");
  assert.equal(statusFromLensTitle("? unknown").kind, "unknown");
  assert.equal(statusFromLensTitle("? not verified").kind, "unknown");
  assert.equal(statusFromLensTitle("⟳ verifying…").kind, "running");
});

test("status-bar texts carry the verdict's symbol", () => {
  assert.equal(statusBarText({ kind: "verified", detail: "" }), "✓ Quokka");
  assert.equal(statusBarText({ kind: "failed", detail: "" }), "✗ Quokka");
  assert.equal(statusBarText({ kind: "unknown", detail: "" }), "? Quokka");
  assert.equal(statusBarText({ kind: "running", detail: "" }), "$(sync~spin) Quokka");
});

test("quokka/verify answers map to verdicts", () => {
  assert.deepEqual(statusFromAnswer({ status: "ok", verdict: "true", time_s: 0.51 }), {
    kind: "verified",
    detail: "verified in 0.5 s",
  });
  assert.equal(statusFromAnswer({ status: "ok", verdict: "false", reason: "r" }).kind, "failed");
  assert.equal(statusFromAnswer({ status: "ok", verdict: "unknown", reason: "timeout" }).kind, "unknown");
  assert.equal(statusFromAnswer({ status: "error", verdict: "unknown", reason: "f.c:1:1: x" }).kind, "failed");
  assert.equal(statusFromAnswer({ status: "failed", verdict: "unknown" }).kind, "unknown");
  assert.equal(statusFromAnswer({ status: "skipped", verdict: "unknown" }).kind, "none");
});

test("the output lines name the verdict and each proven invariant", () => {
  const lines = answerLines("linear.c", {
    status: "ok",
    verdict: "true",
    reason: "spacer found inductive invariants",
    time_s: 0.05,
    cached: true,
    invariants: [{ loop: "L9", line: 9, expr: "s <= 2*i" }],
  });
  assert.deepEqual(lines, [
    "linear.c: TRUE (cached) in 50 ms: spacer found inductive invariants",
    "  loop L9 (line 9): s <= 2*i",
  ]);
});
