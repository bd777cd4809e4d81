import fs from 'node:fs';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';
import { loadConfig } from '../../src/config/env';
import { createLogger } from '../../src/logger';
import { CompanySearchIndex } from '../../src/search/company-search';
import { startServer } from '../../src/server';
import type { RunningServer } from '../../src/server';
import { splitStatements } from '../../src/store/cypher-files';
import { embeddedStore } from '../../src/store/open-store';
import { readSeed, tempDir } from '../support/paths';
import { buildWebApp } from '../support/web-build';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const inCi = process.env.CI === 'true' || process.env.CI === '1';
const haveBrowser = fs.existsSync(CHROMIUM);
const suite = haveBrowser || inCi ? describe : describe.skip;
const KEY = 'test-key-0123456789abcdef';

/**
 * The analyst app on a server that has just started and is still building its search index: a search
 * says so and asks again when the server said to, instead of failing the page.
 */
suite('the web app while the server builds its first search index', () => {
  const dataDir = tempDir('first-start-app');
  let running: RunningServer;
  let browser: Browser;
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const build = CompanySearchIndex.build.bind(CompanySearchIndex);
  let spy: jest.SpyInstance;

  beforeAll(async () => {
    if (!haveBrowser) throw new Error(`no browser at ${CHROMIUM}: apt-get install -y chromium`);
    buildWebApp();
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      API_KEYS: KEY,
      SEED_DEMO: 'false',
      LOG_LEVEL: 'silent',
      JOBS_POLL_MS: '100',
    });
    const log = createLogger('silent');
    const seeding = embeddedStore(config, log);
    await seeding.open();
    await seeding.runScript(splitStatements(readSeed('test-small.cypher')));
    await seeding.close();
    spy = jest.spyOn(CompanySearchIndex, 'build').mockImplementation(async (store, l, opts) => {
      const index = await build(store, l, opts);
      await gate;
      return index;
    });
    running = await startServer(config, log);
    browser = await chromium.launch({
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
  });

  afterAll(async () => {
    release();
    spy?.mockRestore();
    await browser?.close();
    await running?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('says the index is being built, then shows the results on its own', async () => {
    const context = await browser.newContext();
    await context.addInitScript(`localStorage.setItem('tiergraph.apiKey', '${KEY}')`);
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`http://127.0.0.1:${running.port}/?q=boeing`);
    const status = page.getByRole('status');
    await status.waitFor();
    expect(await status.textContent()).toMatch(/still building its search index.*searches again in 5 s/);
    expect(await page.getByText('Something went wrong').count()).toBe(0);
    release();
    await page.getByRole('link', { name: 'Boeing Co' }).waitFor();
    expect(await page.getByRole('status').count()).toBe(0);
    await context.close();
  }, 40_000);
});
