// The real-editor test: the packaged extension in code-server, checked from the page in headless
// Chromium: the inlay hint at the loop, the code lens, the status bar, the diagnostics and the hover,
// and a wrong ACSL loop invariant reported as refuted on its own line (with its counterexample state).
// Run through e2e/run.sh (`npm run e2e`), which installs what it needs and packages the extension.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import puppeteer, { type Browser } from "puppeteer-core";

import { CodeServer } from "./codeServer.mts";
import { killStragglers, Processes } from "./processes.mts";
import { Workbench } from "./workbench.mts";

const HERE = import.meta.dirname;
const EXTENSION_DIR = path.resolve(HERE, "..");
const REPO = path.resolve(EXTENSION_DIR, "..", "..");
const OUT = process.env.QUOKKA_E2E_OUT ?? "/tmp/quokka-e2e";
const VERIFY_TIMEOUT_MS = 120_000; // server start (imports z3) and one verification
const RUN_TIMEOUT_MS = 8 * 60_000;
const CHROMIUM = process.env.QUOKKA_E2E_CHROMIUM ?? "/usr/bin/chromium";
const LOOP_LINE = 9; // `while (i < n) {` in examples/linear.c
const ASSERT_LINE = 12; // the failing assertion in examples/sum_bug.c
// wrong_invariant.c: examples/linear.c with a wrong ACSL loop invariant (`s == 2*i` holds) on a line
// of its own above the loop, so that the annotation is line LOOP_LINE and the loop the line below.
const WRONG_INVARIANT = "    /*@ loop invariant s == 3*i; */";
const ANNOTATION_LINE = LOOP_LINE;
const ANNOTATED_LOOP_LINE = LOOP_LINE + 1; // its `while (i < n) {`

interface Check {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") {
    throw new Error(`${name} is not set: run this through e2e/run.sh`);
  }
  return value;
}

/** The language server's program: $QUOKKA_E2E_SERVER, else the repository's .venv, else PATH's. */
function quokkaProgram(): string {
  const venv = path.join(REPO, ".venv", "bin", "quokka");
  return process.env.QUOKKA_E2E_SERVER ?? (fs.existsSync(venv) ? venv : "quokka");
}

function withWrongInvariant(linear: string): string {
  const lines = linear.split("\n");
  if (!lines[LOOP_LINE - 1]?.startsWith("    while (i < n) {")) {
    throw new Error(`examples/linear.c: line ${LOOP_LINE} is not its loop: ${JSON.stringify(lines[LOOP_LINE - 1])}`);
  }
  lines.splice(LOOP_LINE - 1, 0, WRONG_INVARIANT);
  return lines.join("\n");
}

function makeWorkspace(root: string): string {
  const folder = path.join(root, "workspace");
  fs.mkdirSync(path.join(folder, ".vscode"), { recursive: true });
  for (const name of ["linear.c", "sum_bug.c"]) {
    fs.copyFileSync(path.join(REPO, "examples", name), path.join(folder, name));
  }
  fs.writeFileSync(path.join(folder, "wrong_invariant.c"), withWrongInvariant(fs.readFileSync(
    path.join(REPO, "examples", "linear.c"), "utf8")));
  const server = [quokkaProgram(), "lsp", "--cache", path.join(root, "cache.sqlite"),
    "--log-file", path.join(root, "logs", "quokka-lsp.log")];
  const settings = { "quokka.serverCommand": server, "quokka.timeout": 30 };
  fs.writeFileSync(path.join(folder, ".vscode", "settings.json"), JSON.stringify(settings, null, 2));
  return folder;
}

async function launchChromium(root: string): Promise<Browser> {
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    defaultViewport: { width: 1400, height: 860 },
    userDataDir: path.join(root, "chromium"),
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"],
  });
}

class Run {
  readonly checks: Check[] = [];
  readonly shots: string[] = [];

  check(name: string, ok: boolean, detail: string): void {
    this.checks.push({ name, ok, detail });
    console.log(`${ok ? "PASS" : "FAIL"} ${name}: ${detail}`);
  }

  async shot(bench: Workbench, name: string): Promise<void> {
    const file = path.join(OUT, name);
    await bench.page.screenshot({ path: file as `${string}.png` });
    this.shots.push(file);
  }
}

async function checkLinear(bench: Workbench, run: Run): Promise<void> {
  await bench.openFile("linear.c", "while (i < n)");
  const lenses = await bench.waitFor("the status lens", () => bench.codeLenses(),
    (found) => found.some((lens) => lens.startsWith("✓ verified in ")), VERIFY_TIMEOUT_MS);
  run.check("code lens on main", /✓ verified in .*Verify.*Verify with model/.test(lenses.join(" | ")),
    JSON.stringify(lenses));
  const loop = await bench.waitForLine((text) => text.includes("⊢"), 20_000, LOOP_LINE);
  const hint = loop.slice(loop.indexOf("⊢")).trim();
  run.check("inlay hint at the loop", loop.startsWith("    while (i < n) {") && /^⊢ \S/.test(hint),
    `line ${LOOP_LINE}: ${JSON.stringify(loop)}`);
  run.check("the hint is the minimal certificate", isMinimalLinearHint(hint), JSON.stringify(hint));
  const status = await bench.waitFor("the status bar", () => bench.statusBarItem("Quokka"),
    (text) => text === "✓ Quokka", 20_000);
  run.check("status-bar verdict", status === "✓ Quokka", JSON.stringify(status));
  const quokkaNotes = (await bench.notifications()).filter((note) => note.includes("Quokka"));
  run.check("no Quokka notifications (the settings reached the server cleanly)", quokkaNotes.length === 0,
    JSON.stringify(quokkaNotes));
  const counts = await bench.problemCounts();
  run.check("no errors or warnings for a proven program", counts.every((n) => n === 0), JSON.stringify(counts));
  await run.shot(bench, "1-linear-hint-and-lens.png");
  const hover = await bench.hover(LOOP_LINE, "while", "Proven invariant");
  const conjuncts = hint.replace(/^⊢ /, "").replace(/ ∧ …$/, "").split(" ∧ ");
  run.check("hover on the loop keyword", hover.includes("Verdict: verified")
    && conjuncts.every((conjunct) => hover.includes(conjunct)), JSON.stringify(hover));
  await new Promise((resolve) => setTimeout(resolve, 800)); // the hover fades in
  await run.shot(bench, "2-linear-hover.png");
  await bench.moveMouseAway();
  await bench.runCommand("Quokka: Verify Current File");
  await bench.runCommand("Quokka: Show Output");
  const log = await bench.waitFor("the Quokka output", () => bench.outputText(),
    (text) => text.includes("linear.c: TRUE in "), 60_000);
  const answer = log.split("\n").find((line) => line.includes("linear.c: TRUE in ")) ?? "";
  run.check("Verify Current File reports to the output", answer.includes("linear.c: TRUE in ")
    && !answer.includes("(cached)"), JSON.stringify(answer));
  const after = await bench.statusBarItem("Quokka");
  run.check("status-bar verdict after Verify Current File", after === "✓ Quokka", JSON.stringify(after));
}

/** `s == 2*i` as one equality (not the two rows `s <= 2*i`, `s >= 2*i`), with `s <= 2*n` and nothing else. */
function isMinimalLinearHint(hint: string): boolean {
  const conjuncts = hint.replace(/^⊢ /, "").split(" ∧ ").map((c) => c.trim()).sort();
  return JSON.stringify(conjuncts) === JSON.stringify(["s <= 2*n", "s == 2*i"]);
}

async function checkBug(bench: Workbench, run: Run): Promise<void> {
  await bench.openFile("sum_bug.c", "sum += 3;");
  const lenses = await bench.waitFor("the status lens", () => bench.codeLenses(),
    (found) => found.some((lens) => lens.startsWith("✗ violation")), VERIFY_TIMEOUT_MS);
  run.check("code lens on a buggy main", lenses.join(" | ").includes(`✗ violation (line ${ASSERT_LINE})`),
    JSON.stringify(lenses));
  const counts = await bench.waitFor("the problem count", () => bench.problemCounts(),
    (found) => (found[0] ?? 0) > 0, 20_000);
  await bench.showProblems();
  const rows = await bench.waitFor("the Problems panel", () => bench.problemRows(),
    (found) => found.length > 1, 10_000);
  run.check("diagnostic count", counts[0] === 1 && (counts[1] ?? 0) === 0, `status bar ${JSON.stringify(counts)}`);
  run.check("Problems panel lists the violated assertion",
    rows.some((row) => row.includes("sum_bug.c")) && rows.some((row) => row.includes(`[Ln ${ASSERT_LINE}`)),
    JSON.stringify(rows));
  const status = await bench.waitFor("the status bar", () => bench.statusBarItem("Quokka"),
    (text) => text === "✗ Quokka", 20_000);
  run.check("status-bar verdict of the buggy file", status === "✗ Quokka", JSON.stringify(status));
  await run.shot(bench, "3-sum-bug-problems.png");
}

/** A wrong ACSL loop invariant on a program proved another way: refuted on its line, with the state. */
async function checkRefutedAnnotation(bench: Workbench, run: Run): Promise<void> {
  await bench.runCommand("View: Close Editor"); // sum_bug.c: the server withdraws its diagnostics
  await bench.waitFor("sum_bug.c's diagnostics withdrawn", () => bench.problemCounts(),
    (found) => found.every((n) => n === 0), 20_000);
  await bench.openFile("wrong_invariant.c", "loop invariant s == 3*i");
  const lenses = await bench.waitFor("the status lens", () => bench.codeLenses(),
    (found) => found.some((lens) => lens.startsWith("✓ verified in ")), VERIFY_TIMEOUT_MS);
  run.check("the program is verified whatever its annotation", lenses.some((lens) => lens.startsWith("✓ verified in ")),
    JSON.stringify(lenses));
  const loop = await bench.waitForLine((text) => text.includes("⊢"), 20_000, ANNOTATED_LOOP_LINE);
  const hint = loop.slice(loop.indexOf("⊢")).trim();
  run.check("the annotated loop's hint is the minimal certificate", loop.startsWith("    while (i < n) {")
    && isMinimalLinearHint(hint), `line ${ANNOTATED_LOOP_LINE}: ${JSON.stringify(loop)}`);
  await bench.showProblems();
  const refuted = (row: string): boolean => row.includes("loop invariant s == 3*i is refuted")
    && row.includes(`[Ln ${ANNOTATION_LINE}`);
  const rows = await bench.waitFor("the refuted annotation in the Problems panel", () => bench.problemRows(),
    (found) => found.some(refuted), 30_000);
  const row = rows.find(refuted) ?? "";
  run.check("Problems panel: the annotation is refuted, on its line, with the state that refutes it",
    /at the loop head with .*\bi = \d+.*\bs = \d+/.test(row) && rows.some((r) => r.includes("wrong_invariant.c")),
    JSON.stringify(row));
  const counts = await bench.problemCounts();
  run.check("one error: the refuted annotation", counts[0] === 1 && (counts[1] ?? 0) === 0,
    `status bar ${JSON.stringify(counts)}`);
  const severity = await bench.problemSeverity(["loop invariant s == 3*i is refuted", `[Ln ${ANNOTATION_LINE}`]);
  run.check("the refuted annotation is an error", severity === "error", JSON.stringify(severity));
  await run.shot(bench, "4-refuted-annotation-problems.png");
  const hover = await bench.hoverText(ANNOTATION_LINE, "invariant", "is refuted");
  run.check("hover on the annotation: refuted, with the counterexample state",
    hover.includes("loop invariant s == 3*i is refuted") && /at the loop head with .*\bs = \d+/.test(hover),
    JSON.stringify(hover));
  await new Promise((resolve) => setTimeout(resolve, 800)); // the hover fades in
  await run.shot(bench, "5-refuted-annotation-hover.png");
  await bench.moveMouseAway();
}

/** A server command that cannot run: the clear notification with the fix, and the status bar says so. */
async function checkNoServer(bench: Workbench, run: Run, folder: string): Promise<void> {
  const settings = { "quokka.serverCommand": [path.join(folder, "no-such-dir", "quokka"), "lsp"] };
  fs.writeFileSync(path.join(folder, ".vscode", "settings.json"), JSON.stringify(settings, null, 2));
  const notes = await bench.waitFor("the start-failure notification", () => bench.notifications(),
    (found) => found.some((note) => note.includes("cannot start the language server")), 30_000);
  const note = notes.find((text) => text.includes("cannot start the language server")) ?? "";
  run.check("notification when the server cannot start", note.includes("pip install quokka-verifier")
    && note.includes("quokka.serverCommand") && note.includes("Open Settings"), JSON.stringify(note));
  await new Promise((resolve) => setTimeout(resolve, 1000)); // the toast fades in
  await run.shot(bench, "6-no-server-notification.png");
  const broken = { "quokka.serverCommand": ["/bin/sh", "-c", "echo 'quokka: broken install' >&2; exit 3"] };
  fs.writeFileSync(path.join(folder, ".vscode", "settings.json"), JSON.stringify(broken, null, 2));
  const later = await bench.waitFor("the notification for a server that exits", () => bench.notifications(),
    (found) => found.some((text) => text.includes("stopped while starting")), 30_000);
  run.check("notification when the server exits at once", later.some((text) => text.includes("stopped while starting")
    && text.includes("pip install quokka-verifier")), JSON.stringify(later));
  await bench.runCommand("Quokka: Show Output");
  const log = await bench.waitFor("the server's message in the output", () => bench.outputText(),
    (text) => text.includes("quokka: broken install"), 10_000);
  run.check("the server's own message is in the output", log.includes("quokka: broken install"), "");
}

async function main(): Promise<number> {
  const started = Date.now();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "quokka-e2e-run-"));
  fs.mkdirSync(path.join(root, "logs"));
  fs.rmSync(OUT, { recursive: true, force: true });
  fs.mkdirSync(OUT, { recursive: true });
  const processes = new Processes(path.join(root, "logs"));
  const run = new Run();
  let browser: Browser | undefined;
  let bench: Workbench | undefined;
  const watchdog = setTimeout(() => {
    console.error(`e2e: still running after ${RUN_TIMEOUT_MS / 1000} s, giving up`);
    void processes.stopAll().then(() => process.exit(3));
  }, RUN_TIMEOUT_MS);
  try {
    const server = new CodeServer({
      node: required("QUOKKA_E2E_NODE"), codeServer: required("QUOKKA_E2E_CODE_SERVER"),
      vsix: path.join(EXTENSION_DIR, "out", "quokka.vsix"), root,
    }, processes);
    await server.installExtension();
    const folder = makeWorkspace(root);
    const url = await server.start(folder);
    browser = await launchChromium(root);
    bench = new Workbench(await browser.newPage());
    await bench.page.goto(url, { waitUntil: "domcontentloaded" });
    await bench.ready(60_000);
    await checkLinear(bench, run);
    await checkBug(bench, run);
    await checkRefutedAnnotation(bench, run);
    await checkNoServer(bench, run, folder);
  } catch (error) {
    run.check("the run itself", false, error instanceof Error ? error.stack ?? error.message : String(error));
    await bench?.page.screenshot({ path: path.join(OUT, "failure.png") as `${string}.png` })
      .then(() => run.shots.push(path.join(OUT, "failure.png"))).catch(() => undefined);
  } finally {
    clearTimeout(watchdog);
    const chromiumPid = browser?.process()?.pid;
    await browser?.close().catch(() => undefined);
    if (chromiumPid !== undefined) {
      try { process.kill(chromiumPid, "SIGKILL"); } catch { /* closed */ }
    }
    await processes.stopAll();
    const stragglers = killStragglers(root);
    if (stragglers.length > 0) {
      console.log(`e2e: killed leftover processes ${stragglers.join(", ")}`);
    }
  }
  for (const log of fs.readdirSync(path.join(root, "logs"))) {
    fs.copyFileSync(path.join(root, "logs", log), path.join(OUT, log));
  }
  const failed = run.checks.filter((c) => !c.ok).length;
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`e2e: screenshots and logs in ${OUT}:`);
  run.shots.forEach((shot) => console.log(`  ${shot}`));
  console.log(`e2e: ${seconds} s in the editor`);
  console.log(`${run.checks.length - failed} passed, ${failed} failed`);
  if (failed === 0) {
    fs.rmSync(root, { recursive: true, force: true });
  } else {
    console.log(`e2e: the run's folder is kept: ${root}`);
  }
  return failed === 0 ? 0 : 1;
}

process.exitCode = await main();
