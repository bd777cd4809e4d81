import type { Browser } from 'playwright-core';
import { describeWithBrowser, launchChromium, requireBrowser } from '../support/browser';
import { startServerBuildingIndex } from '../support/held-build';
import type { ServerBuildingIndex } from '../support/held-build';
import { TEST_KEY } from '../support/server';
import { buildWebApp } from '../support/web-build';

/**
 * The analyst app on a server that has just started and is still building its search index: a search
 * says so and asks again when the server said to, instead of failing the page.
 */
describeWithBrowser('the web app while the server builds its first search index', () => {
  let server: ServerBuildingIndex;
  let browser: Browser;

  beforeAll(async () => {
    requireBrowser();
    buildWebApp();
    server = await startServerBuildingIndex('first-start-app');
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('says the index is being built, then shows the results on its own', async () => {
    const context = await browser.newContext();
    await context.addInitScript(`localStorage.setItem('tiergraph.apiKey', '${TEST_KEY}')`);
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${server.base}/?q=boeing`);
    const status = page.getByRole('status').filter({ hasText: 'search index' });
    await status.waitFor();
    expect(await status.textContent()).toMatch(/still building its search index.*searches again in 5 s/);
    expect(await page.getByText('Something went wrong').count()).toBe(0);
    server.release();
    await page.getByRole('link', { name: 'Boeing Co' }).waitFor();
    expect(await status.count()).toBe(0);
    await context.close();
  }, 40_000);
});
