// The `quokka.*` settings the language server reads (server/settings.py); the rest are the client's.
export const SERVER_KEYS: readonly string[] = [
  "timeout",
  "proposers",
  "engines",
  "model",
  "endpoint",
  "samples",
  "verifyOn",
  "debounceMs",
  "showProvenHints",
  "provenDiagnostics",
  "dataModel",
  "maxParallel",
];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The `quokka` section as the server should see it: only its own keys, and unset values left out
 * (the server reports unknown keys and rejects `null` for a number, so `serverCommand`, `trace` and
 * an empty `samples` must not reach it).
 */
export function serverSettings(section: unknown): Record<string, unknown> | null {
  if (!isRecord(section)) {
    return null;
  }
  const out: Record<string, unknown> = {};
  for (const key of SERVER_KEYS) {
    const value = section[key];
    if (value !== undefined && value !== null && value !== "") {
      out[key] = value;
    }
  }
  return out;
}

export function hasModel(section: unknown): boolean {
  const settings = serverSettings(section) ?? {};
  return typeof settings.model === "string" || typeof settings.endpoint === "string";
}
