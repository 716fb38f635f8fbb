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

/** Headless `name`; throws when it is not installed (.ci/run installs both). `env`: more of the browser's environment (e.g. TZ). */
export function launchBrowser(name: BrowserName, env: Record<string, string> = {}): Promise<Browser> {
  const executablePath = BROWSERS[name];
  if (!existsSync(executablePath)) throw new Error(`${name} is not installed at ${executablePath} (.ci/run installs it)`);
  const common = { executablePath, headless: true, timeout: 180_000, env: { ...process.env, ...env } };
  return name === "firefox"
    ? puppeteer.launch({ ...common, browser: "firefox", protocol: "webDriverBiDi" })
    : // Root (CI) may not use Chromium's sandbox.
      puppeteer.launch({ ...common, browser: "chrome", args: ["--no-sandbox"] });
}
