import fs from 'node:fs';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';
import { inCi, skipVisibly } from './services';

/** Debian's chromium (never a download); CHROMIUM_PATH names another. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The browser headless, with nothing of its own reaching the network. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

const BROWSER_HINT = `no browser at ${CHROMIUM}; install one with: apt-get install -y chromium (or set CHROMIUM_PATH)`;

/** Whether the browser is there. */
export const haveBrowser = (): boolean => fs.existsSync(CHROMIUM);

/**
 * `describe` for a suite that drives the browser. Without one, the suite is registered as skipped
 * with the hint printed; under CI=true, where nothing skips, it runs and fails with the hint.
 */
export function describeWithBrowser(name: string, fn: () => void): void {
  if (haveBrowser() || inCi()) {
    describe(name, fn);
    return;
  }
  skipVisibly(describe.skip, name, BROWSER_HINT, fn);
}

/** Throws the hint when there is no browser (for a suite's beforeAll under CI=true). */
export function requireBrowser(): void {
  if (!haveBrowser()) throw new Error(BROWSER_HINT);
}
