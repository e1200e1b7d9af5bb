// A file's verification state, from the server's code lens on `main` or a `quokka/verify` answer.

export type VerdictKind = "running" | "verified" | "failed" | "unknown" | "none";

export interface FileStatus {
  readonly kind: VerdictKind;
  readonly detail: string;
}

export const NO_STATUS: FileStatus = { kind: "none", detail: "" };
export const RUNNING: FileStatus = { kind: "running", detail: "verifying…" };

const LENS_PREFIXES: ReadonlyArray<readonly [string, VerdictKind]> = [
  ["⟳", "running"],
  ["✓", "verified"],
  ["✗", "failed"],
  ["?", "unknown"],
];

/** The state the status lens shows ("✓ verified in 0.5 s", "⟳ verifying…", "✗ violation (line 12)"). */
export function statusFromLensTitle(title: string): FileStatus {
  const found = LENS_PREFIXES.find(([prefix]) => title.startsWith(prefix));
  if (found === undefined) {
    return { kind: "unknown", detail: title };
  }
  return { kind: found[1], detail: title.slice(found[0].length).trim() };
}

export interface VerifyAnswer {
  readonly status?: string;
  readonly verdict?: string; // "true" | "false" | "unknown"
  readonly reason?: string;
  readonly time_s?: number;
  readonly cached?: boolean;
  readonly invariants?: ReadonlyArray<{ readonly loop?: string; readonly line?: number; readonly expr?: string }>;
}

export function seconds(value: number): string {
  return value >= 0.1 ? `${value.toFixed(1)} s` : `${Math.round(value * 1000)} ms`;
}

/** The state after a `quokka/verify` answer (the verifier's Result JSON plus `status`). */
export function statusFromAnswer(answer: VerifyAnswer): FileStatus {
  const reason = answer.reason ?? "";
  switch (answer.status) {
    case "skipped":
      return NO_STATUS;
    case "error":
      return { kind: "failed", detail: `not a valid program: ${reason}` };
    case "failed":
      return { kind: "unknown", detail: `verifier failed: ${reason}` };
    default:
      break;
  }
  const verdict = answer.verdict?.toLowerCase();
  if (verdict === "true") {
    return { kind: "verified", detail: `verified in ${seconds(answer.time_s ?? 0)}` };
  }
  if (verdict === "false") {
    return { kind: "failed", detail: `assertion violated: ${reason}` };
  }
  return { kind: "unknown", detail: `unknown: ${reason}` };
}

const SYMBOLS: Record<VerdictKind, string> = {
  running: "$(sync~spin)",
  verified: "✓",
  failed: "✗",
  unknown: "?",
  none: "",
};

/** The status-bar text: the verdict's symbol, then the name. */
export function statusBarText(status: FileStatus): string {
  return `${SYMBOLS[status.kind]} Quokka`.trim();
}

/** Lines for the output channel describing one `quokka/verify` answer. */
export function answerLines(file: string, answer: VerifyAnswer): string[] {
  const cached = answer.cached === true ? " (cached)" : "";
  const verdict = answer.status === "ok" || answer.status === undefined ? answer.verdict : answer.status;
  const head = `${file}: ${verdict?.toUpperCase() ?? "?"}${cached} in ${seconds(answer.time_s ?? 0)}: ${answer.reason ?? ""}`;
  const proven = (answer.invariants ?? []).map(
    (inv) => `  loop ${inv.loop ?? "?"} (line ${inv.line ?? "?"}): ${inv.expr ?? ""}`,
  );
  return [head, ...proven];
}
