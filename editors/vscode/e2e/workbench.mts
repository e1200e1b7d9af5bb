// Reading and driving the VS Code workbench in the page: files, lines, lenses, hovers, status bar.
import type { ElementHandle, Page } from "puppeteer-core";

const SHORT_MS = 15_000;

export class Workbench {
  readonly page: Page;

  constructor(page: Page) {
    this.page = page;
  }

  async ready(timeoutMs: number): Promise<void> {
    await this.page.waitForSelector(".monaco-workbench .part.editor", { timeout: timeoutMs });
    await this.page.waitForSelector(".explorer-folders-view .monaco-list-row", { timeout: timeoutMs });
  }

  /** Quick Open (Ctrl+P), the file's name, Enter; resolves once its editor shows `expected`. */
  async openFile(name: string, expected: string): Promise<void> {
    await this.page.locator(".monaco-workbench .part.editor").click();
    await this.page.keyboard.down("Control");
    await this.page.keyboard.press("p");
    await this.page.keyboard.up("Control");
    await this.page.waitForSelector(".quick-input-widget input", { visible: true, timeout: SHORT_MS });
    await this.page.keyboard.type(name);
    await this.page.waitForFunction(
      (file: string) => [...document.querySelectorAll(".quick-input-list .monaco-list-row")]
        .some((row) => row.textContent?.includes(file) === true),
      { timeout: SHORT_MS }, name);
    await this.page.keyboard.press("Enter");
    await this.waitForLine((text) => text.includes(expected), SHORT_MS);
  }

  /** Run a command from the Command Palette by its title, e.g. "Quokka: Show Output". */
  async runCommand(title: string): Promise<void> {
    await this.page.keyboard.press("F1");
    await this.page.waitForSelector(".quick-input-widget input", { visible: true, timeout: SHORT_MS });
    await this.page.keyboard.type(title);
    await this.page.waitForFunction(
      (wanted: string) => [...document.querySelectorAll(".quick-input-list .monaco-list-row")]
        .some((row) => row.getAttribute("aria-label")?.startsWith(wanted) === true),
      { timeout: SHORT_MS }, title);
    await this.page.keyboard.press("Enter");
  }

  /** The text of the Output panel's editor. */
  async outputText(): Promise<string> {
    return this.page.$$eval(".part.panel .monaco-editor .view-lines .view-line",
      (els) => els.map((el) => el.textContent?.replace(/\u00a0/g, " ") ?? "").join("\n"));
  }

  /** The rendered text of line `line` (1-based) of the active editor, inlay hints included. */
  async lineText(line: number): Promise<string | undefined> {
    const view = await this.lineView(line);
    return view?.evaluate((el) => el.textContent?.replace(/\u00a0/g, " "));
  }

  /** The rendered line `line` (1-based) of the active editor: the view line level with its number. */
  private async lineView(line: number): Promise<ElementHandle<HTMLElement> | null> {
    const handle = await this.page.evaluateHandle((wanted: number) => {
      const editor = document.querySelector(".editor-group-container.active .monaco-editor");
      const number = [...(editor?.querySelectorAll(".margin-view-overlays .line-numbers") ?? [])]
        .find((el) => el.textContent?.trim() === String(wanted));
      const top = (number?.parentElement as HTMLElement | null | undefined)?.style.top;
      return [...(editor?.querySelectorAll<HTMLElement>(".view-lines .view-line") ?? [])]
        .find((el) => el.style.top === top) ?? null;
    }, line);
    return handle.asElement() as ElementHandle<HTMLElement> | null;
  }

  async waitForLine(test: (text: string) => boolean, timeoutMs: number, line?: number): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const texts = line === undefined ? await this.allLines() : [await this.lineText(line) ?? ""];
      const found = texts.find(test);
      if (found !== undefined) {
        return found;
      }
      if (Date.now() > deadline) {
        throw new Error(`no editor line passed the test within ${timeoutMs} ms; lines: ${JSON.stringify(texts)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  private async allLines(): Promise<string[]> {
    return this.page.$$eval(".editor-group-container.active .monaco-editor .view-lines .view-line",
      (els) => els.map((el) => el.textContent?.replace(/\u00a0/g, " ") ?? ""));
  }

  /** The code lenses of the active editor, as shown: "✓ verified in 0.5 s | Verify | …". */
  async codeLenses(): Promise<string[]> {
    return this.page.$$eval(".editor-group-container.active .monaco-editor .codelens-decoration",
      (els) => els.map((el) => el.textContent?.replace(/\u00a0/g, " ").trim() ?? ""));
  }

  async waitFor<T>(what: string, read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs: number): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await read();
      if (ok(value)) {
        return value;
      }
      if (Date.now() > deadline) {
        throw new Error(`${what}: still ${JSON.stringify(value)} after ${timeoutMs} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** Move the mouse onto the token `word` of line `line`; resolves to the hover's text. */
  async hover(line: number, word: string, expected: string): Promise<string> {
    return this.hoverOn(await this.token(line, word), expected);
  }

  /** Move the mouse onto the innermost token of line `line` whose text contains `fragment` (e.g. a comment). */
  async hoverText(line: number, fragment: string, expected: string): Promise<string> {
    return this.hoverOn(await this.token(line, fragment, true), expected);
  }

  private async hoverOn(token: ElementHandle<Element>, expected: string): Promise<string> {
    const box = await token.boundingBox();
    if (box === null) {
      throw new Error(`the token ${await token.evaluate((el) => el.textContent)} is not visible`);
    }
    await this.page.mouse.move(box.x + Math.min(box.width / 2, 40), box.y + box.height / 2, { steps: 4 });
    const handle = await this.page.waitForFunction(
      (text: string) => [...document.querySelectorAll<HTMLElement>(".monaco-hover .hover-contents, .monaco-hover-content")]
        .map((el) => el.innerText).find((t) => t.includes(text)),
      { timeout: SHORT_MS }, expected);
    return String(await handle.jsonValue());
  }

  private async token(line: number, word: string, partial = false): Promise<ElementHandle<Element>> {
    const view = await this.lineView(line);
    const handle = await view?.evaluateHandle((el: HTMLElement, text: string, partial: boolean) =>
      [...el.querySelectorAll("span span")].find((span) => {
        const shown = span.textContent?.replace(/\u00a0/g, " ") ?? "";
        return partial ? shown.includes(text) : shown === text;
      }) ?? null, word, partial);
    const element = handle?.asElement() ?? null;
    if (element === null) {
      throw new Error(`no token ${word} on line ${line}`);
    }
    return element as ElementHandle<Element>;
  }

  /** The text of the status-bar entry whose label mentions `name`. */
  async statusBarItem(name: string): Promise<string | undefined> {
    return this.page.evaluate((text: string) => {
      const items = [...document.querySelectorAll<HTMLElement>(".statusbar-item")];
      const found = items.find((el) => el.innerText.includes(text) || el.getAttribute("aria-label")?.includes(text));
      return found?.innerText.trim();
    }, name);
  }

  /** Errors, warnings (and infos, where shown) of the Problems entry in the status bar, e.g. [1, 0]. */
  async problemCounts(): Promise<number[]> {
    const text = await this.page.$eval("#status\\.problems", (el) => (el as HTMLElement).innerText);
    return (text.match(/\d+/g) ?? []).map(Number);
  }

  async problemRows(): Promise<string[]> {
    return this.page.$$eval(".markers-panel .monaco-list-row",
      (rows) => rows.map((row) => (row as HTMLElement).innerText.replace(/\s+/g, " ").trim()));
  }

  /** The severity icon ("error", "warning", "info") of the first Problems row whose text contains all of `parts`. */
  async problemSeverity(parts: string[]): Promise<string | undefined> {
    return this.page.$$eval(".markers-panel .monaco-list-row", (rows, wanted: string[]) => {
      const row = rows.find((el) => {
        const text = (el as HTMLElement).innerText.replace(/\s+/g, " ");
        return wanted.every((part) => text.includes(part));
      });
      const icon = row?.querySelector("[class*='codicon-error'], [class*='codicon-warning'], [class*='codicon-info']");
      const found = icon?.className.match(/codicon-(error|warning|info)/);
      return found?.[1];
    }, parts);
  }

  /** Open the Problems panel (the status-bar entry toggles it: clicked only when the panel is not shown). */
  async showProblems(): Promise<void> {
    const shown = await this.page.$$eval(".markers-panel",
      (els) => els.some((el) => (el as HTMLElement).offsetParent !== null));
    if (shown) {
      return;
    }
    await this.page.locator("#status\\.problems").click();
    await this.page.waitForSelector(".markers-panel", { visible: true, timeout: SHORT_MS });
  }

  /** The texts of the notification toasts on screen. */
  async notifications(): Promise<string[]> {
    return this.page.$$eval(".notifications-toasts .notification-toast",
      (els) => els.map((el) => (el as HTMLElement).innerText.replace(/\s+/g, " ").trim()));
  }

  async moveMouseAway(): Promise<void> {
    await this.page.mouse.move(5, 5);
    await this.page.keyboard.press("Escape");
  }
}
