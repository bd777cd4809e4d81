import fs from 'node:fs';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
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

/** How a Content-Security-Policy violation reaches a page's console (see {@link reportPolicyViolations}). */
export const POLICY_VIOLATION = 'CSP violation: ';

/**
 * Has each violation of a page's Content-Security-Policy in `context` logged to the console as an
 * error, `CSP violation: <directive> blocked <what> in <file>:<line>`, and collected in `into` when
 * one is given: what the browser logs of its own accord is worded differently from one version to
 * the next.
 */
export async function reportPolicyViolations(context: BrowserContext, into?: string[]): Promise<void> {
  await context.addInitScript(`document.addEventListener('securitypolicyviolation', (e) =>
    console.error(${JSON.stringify(POLICY_VIOLATION)} + e.effectiveDirective + ' blocked ' +
      (e.blockedURI || 'inline') + ' in ' + e.sourceFile + ':' + e.lineNumber))`);
  if (into)
    context.on('console', (m) => {
      if (m.text().startsWith(POLICY_VIOLATION)) into.push(m.text());
    });
}

/**
 * Waits until `expression` is true in the page. `page.waitForFunction` given an expression evaluates
 * it again at each poll with the page's own `eval`, which the app's policy refuses; evaluated from
 * here, it is not the page's script.
 */
export async function waitInPage(page: Page, expression: string, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await page.evaluate(expression))) {
    if (Date.now() > end) throw new Error(`not true after ${timeoutMs} ms: ${expression}`);
    await page.waitForTimeout(50);
  }
}
