/**
 * The browsers the dashboard is tested (and benchmarked) in: Debian's Chromium and Firefox ESR,
 * both driven headless by puppeteer-core — Chromium over the DevTools protocol, Firefox over
 * WebDriver BiDi, which Firefox speaks itself (playwright-core's Firefox needs Playwright's own
 * patched build). A missing browser is an error, never a skip.
 */
import { existsSync } from "node:fs";
import puppeteer, { type Browser } from "puppeteer-core";

export const BROWSERS = { chromium: "/usr/bin/chromium", firefox: "/usr/bin/firefox-esr" } as const;
export type BrowserName = keyof typeof BROWSERS;

/** Headless `name`; throws when it is not installed (.ci/run installs both). */
export function launchBrowser(name: BrowserName): Promise<Browser> {
  const executablePath = BROWSERS[name];
  if (!existsSync(executablePath)) throw new Error(`${name} is not installed at ${executablePath} (.ci/run installs it)`);
  return name === "firefox"
    ? puppeteer.launch({ browser: "firefox", executablePath, headless: true, protocol: "webDriverBiDi", timeout: 180_000 })
    : // Root (CI) may not use Chromium's sandbox.
      puppeteer.launch({ browser: "chrome", executablePath, headless: true, args: ["--no-sandbox"], timeout: 180_000 });
}
