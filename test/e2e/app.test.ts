import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  describeWithBrowser,
  launchChromium,
  POLICY_VIOLATION,
  reportPolicyViolations,
  requireBrowser,
} from '../support/browser';
import { REQUIRED_APP_DIRECTIVES } from '../support/app-policy';
import { startTestServer, TEST_KEY } from '../support/server';
import type { TestServer } from '../support/server';
import { ROOT } from '../support/paths';
import { buildWebApp } from '../support/web-build';

/**
 * The analyst app in a real browser against a real server on the demo seed.
 * The browser is Debian's chromium (never a download); CI installs it, and
 * elsewhere the suite says how to get it instead of failing.
 */
const ARTIFACTS = path.join(ROOT, 'test', 'e2e', 'artifacts');

describeWithBrowser('the web app in chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const consoleErrors: string[] = [];
  const offsite: string[] = [];
  let step = 0;
  let base = '';

  /**
   * What axe-core finds in Swagger UI's own markup on the API reference, left to it: its title (h1) is
   * followed by the operations' groups (h3), and its information and server blocks sit beside its own
   * main landmark, where a landmark of ours around them would be a second main.
   */
  const SWAGGER_UI_OWN = new Set(['heading-order:moderate', 'region:moderate']);
  /** axe-core's findings per page, kept for the figures printed at the end. */
  const axeReport: { page: string; rules: string[]; failing: string[] }[] = [];
  const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

  /**
   * Runs axe-core (WCAG 2.x A and AA rules and its best practices) on what the
   * page shows now and fails on any violation, whatever its impact.
   */
  const accessible = async (name: string) => {
    // Evaluated rather than added as a script element, which the app's policy would refuse (inline).
    if (!(await page.evaluate("typeof window.axe === 'object'"))) await page.evaluate(AXE);
    // CodeMirror's scrolling areas hold no focusable element, but each editor is scrolled from the
    // keyboard through its input area, which takes focus: axe cannot see that relation.
    const result = await page.evaluate<
      { id: string; impact: string | null; nodes: string[] }[]
    >(`axe.run(document, {
      rules: { 'scrollable-region-focusable': { enabled: !document.querySelector('.CodeMirror') } },
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
      resultTypes: ['violations'],
    }).then((r) => r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 3),
    })))`);
    // Every rule holds on the app's own pages; Swagger UI's markup (the API reference) skips from its
    // title (h1) to the operations' groups (h3), which is left to it.
    const failing = result
      .filter((v) => !(name === 'API reference' && SWAGGER_UI_OWN.has(`${v.id}:${v.impact}`)))
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.join(', ')}`);
    axeReport.push({ page: name, rules: result.map((v) => `${v.id}:${v.impact}`), failing });
    expect([name, failing]).toEqual([name, []]);
  };

  const shot = async (name: string) => {
    step++;
    await page.screenshot({
      path: path.join(ARTIFACTS, `${String(step).padStart(2, '0')}-${name}.png`),
      fullPage: true,
    });
  };

  beforeAll(async () => {
    requireBrowser();
    buildWebApp();
    // Only this run's screenshots, numbered by step (the folder is git-ignored).
    fs.rmSync(ARTIFACTS, { recursive: true, force: true });
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    server = await startTestServer({}, 'demo.cypher');
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1360, height: 900 }, acceptDownloads: true });
    // Download links are signed for http://localhost:<port> (PUBLIC_URL unset), so the browser uses that origin.
    base = `http://localhost:${server.running.port}`;
    const origin = new URL(base).origin;
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('data:') || url.startsWith('blob:') || new URL(url).origin === origin)
        return route.continue();
      offsite.push(url);
      return route.abort();
    });
    // Every violation of a page's Content-Security-Policy reaches the console, which each step checks.
    await reportPolicyViolations(context);
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('console', (m) => {
      // Warnings too: a library's warning on every map is a defect the analyst's console shows.
      if (m.type() === 'error' || m.type() === 'warning') consoleErrors.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => consoleErrors.push(String(e)));
  });

  afterAll(async () => {
    if (axeReport.length > 0)
      process.stderr.write(
        `axe-core: ${axeReport.map((r) => `${r.page}: ${r.rules.length} [${r.rules.join(' ')}]`).join('; ')}\n`,
      );
    await browser?.close();
    await server?.stop();
  });

  afterEach(() => {
    // Every step must leave the console clean and keep every request on the server.
    const errors = consoleErrors.splice(0);
    const away = offsite.splice(0);
    expect(errors).toEqual([]);
    expect(away).toEqual([]);
  });

  /** The company with the most relationships in the demo seed: the map's hub. */
  let hub: { vid: string; name: string };

  it('asks for the API key once and keeps it', async () => {
    const res = await server.get('/v1/companies/?limit=1');
    hub = ((await res.json()) as { results: { vid: string; name: string }[] }).results[0]!;

    await page.goto(`${base}/`);
    await page.getByLabel('API key').fill(TEST_KEY);
    await shot('api-key');
    await accessible('key entry');
    await page.getByRole('button', { name: 'Save key' }).click();
    await page.getByRole('searchbox', { name: 'Search companies' }).waitFor();
    expect(page.url()).not.toContain(TEST_KEY);
    expect(await page.evaluate("localStorage.getItem('tiergraph.apiKey')")).toBe(TEST_KEY);
  });

  it('runs only its own scripts and styles: its policy refuses inline script', async () => {
    const res = await page.goto(`${base}/companies/${hub.vid}`);
    const policy = (res?.headers()['content-security-policy'] ?? '').split(/\s*;\s*/);
    for (const directive of REQUIRED_APP_DIRECTIVES) expect(policy).toContain(directive);
    await page.getByRole('heading', { level: 1, name: hub.name }).waitFor();
    // Markup slipped into the page runs nothing, and the refusal is reported (so its absence means something).
    await page.evaluate(`{
      const s = document.createElement('script');
      s.textContent = 'window.injected = true';
      document.body.append(s);
      const img = document.createElement('img');
      img.src = 'http://example.invalid/x.png';
      document.body.append(img);
      s.remove();
      img.remove();
    }`);
    await page.waitForTimeout(200);
    expect(await page.evaluate('window.injected === true')).toBe(false);
    // The browser says so in its own words too; the events are what the other steps count on.
    const logged = consoleErrors.splice(0);
    const refused = logged.filter((m) => m.startsWith(`error: ${POLICY_VIOLATION}`));
    expect(logged.filter((m) => !refused.includes(m) && !m.includes('Content Security Policy'))).toEqual([]);
    expect(refused).toEqual([
      expect.stringMatching(/^error: CSP violation: script-src-elem blocked inline/),
      expect.stringMatching(/^error: CSP violation: img-src blocked http:\/\/example\.invalid\/x\.png/),
    ]);
    await page.goto(`${base}/`);
    await page.getByRole('searchbox', { name: 'Search companies' }).waitFor();
  });

  it('suggests while typing and lists ranked results with their counts', async () => {
    const box = page.getByRole('searchbox', { name: 'Search companies' });
    const word = hub.name.split(' ')[0]!;
    await box.pressSequentially(word.slice(0, 5), { delay: 30 });
    await page.locator('#suggestions:not([hidden]) a').first().waitFor();
    // Each suggestion names its company's country, which tells namesakes apart.
    const countries = (await page.locator('#suggestions li').allTextContents()).map((t) => / · \S/.test(t));
    expect(countries.length).toBeGreaterThan(0);
    expect(countries.every(Boolean)).toBe(true);
    await shot('suggestions');
    await box.press('Enter');
    const link = page.getByRole('link', { name: hub.name, exact: true });
    await link.waitFor();
    const row = page.getByRole('row').filter({ has: link });
    await expect(row.getByRole('cell').count()).resolves.toBe(5);
    await shot('results');
    await accessible('search');
    await link.click();
    await page.getByRole('heading', { level: 1, name: hub.name }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/companies/${hub.vid}`);
  });

  it('shows the company with its suppliers, and a relationship with its evidence', async () => {
    await page.getByRole('heading', { name: 'Identifiers' }).waitFor();
    // Its cluster: the members, or the sentence that it is alone in it.
    await page
      .getByRole('list', { name: 'Cluster members' })
      .getByRole('listitem')
      .first()
      .or(page.getByText('This company is not part of a larger cluster.'))
      .waitFor();
    const suppliers = page.getByRole('region', { name: /Suppliers/ });
    await suppliers.getByRole('row').nth(1).waitFor();
    await shot('company');
    await accessible('company');
    await suppliers
      .getByRole('button', { name: /^Evidence: / })
      .first()
      .click();
    const evidence = page.getByRole('region', { name: 'Evidence' });
    await evidence.getByRole('listitem').first().waitFor();
    expect(await evidence.getByRole('link').count()).toBeGreaterThan(0);
    await shot('evidence');
    await accessible('evidence');
  });

  it('survives a reload of the company address', async () => {
    await page.reload();
    await page.getByRole('heading', { level: 1, name: hub.name }).waitFor();
  });

  it('draws the tier map of the hub', async () => {
    const clicked = Date.now();
    await page.getByRole('link', { name: 'Tier map' }).click();
    const figure = page.getByRole('figure', { name: 'Tier map' });
    await figure.and(page.locator('[data-nodes]')).waitFor();
    const drawnMs = Date.now() - clicked;
    const nodes = Number(await figure.getAttribute('data-nodes'));
    expect(nodes).toBeGreaterThan(1);
    // Something other than the background was painted on the graph's canvas.
    // Evaluated in the page (the tests are compiled without the DOM's types).
    const painted = await page.evaluate(`[...document.querySelectorAll('[role=figure] canvas')].some((c) => {
      const ctx = c.getContext('2d');
      if (!ctx || c.width === 0) return false;
      const data = ctx.getImageData(0, 0, c.width, c.height).data;
      for (let i = 3; i < data.length; i += 4) if (data[i] !== 0) return true;
      return false;
    })`);
    expect(painted).toBe(true);
    await figure.hover({ position: { x: 10, y: 10 } });
    await shot('tier-map');
    await accessible('tier map');
    process.stderr.write(`tier map of ${hub.name}: ${nodes} nodes drawn ${drawnMs} ms after the click\n`);

    await page.getByLabel('Tiers').selectOption('1');
    await page.waitForURL(/tiers=1/);
    await figure.and(page.locator('[data-nodes]')).waitFor();
    expect(Number(await figure.getAttribute('data-nodes'))).toBeLessThanOrEqual(nodes);
  });

  it('starts an export, follows it and downloads the file', async () => {
    await page.goto(`${base}/companies/${hub.vid}`);
    const panel = page.getByRole('region', { name: 'Export tier view' });
    await panel.getByLabel('Tiers').selectOption('2');
    await panel.getByRole('button', { name: 'Start export' }).click();
    const link = panel.getByRole('link', { name: /^Download / });
    await link.waitFor({ timeout: 30_000 });
    await shot('export');
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    const file = await download.path();
    const text = fs.readFileSync(file, 'utf8');
    expect(text.split('\r\n')[0]).toContain('root_node');
    expect(text.split('\r\n').length).toBeGreaterThan(2);
  });

  it('opens the explorer with the stored key, loads the schema and runs the example', async () => {
    const introspection = page.waitForResponse(
      (r) => r.url().endsWith('/graphql') && (r.request().postData() ?? '').includes('__schema'),
    );
    await page.goto(`${base}/explorer`);
    const res = await introspection;
    expect(res.status()).toBe(200);
    const body = (await res.json()) as {
      data?: { __schema?: { queryType?: { name: string } } };
      errors?: unknown;
    };
    expect(body.errors).toBeUndefined();
    expect(body.data?.__schema?.queryType?.name).toBe('Query');
    expect(res.request().headers()['x-service-key']).toBe(TEST_KEY);
    expect(page.url()).not.toContain(TEST_KEY);
    // The schema reached the explorer: its documentation explorer lists the root type's fields.
    await page.getByRole('button', { name: /documentation explorer/i }).click();
    const docs = page.locator('.graphiql-doc-explorer');
    await docs.getByRole('link', { name: 'Query', exact: true }).click();
    await docs.getByRole('link', { name: 'companies', exact: true }).first().waitFor();
    await shot('explorer-schema');

    const ran = page.waitForResponse(
      (r) => r.url().endsWith('/graphql') && (r.request().postData() ?? '').includes('FindSuppliers'),
    );
    await page.getByRole('button', { name: /execute query/i }).click();
    const answer = (await (await ran).json()) as {
      data?: { companies: { results: { name: string }[] } };
      errors?: unknown;
    };
    expect(answer.errors).toBeUndefined();
    const first = answer.data!.companies.results[0]!.name;
    await page.locator('.result-window').getByText(first, { exact: false }).first().waitFor();
    await shot('explorer-result');
    await accessible('explorer');
  });

  it('asks for the key once in the explorer when the app has not stored one', async () => {
    await page.evaluate("localStorage.removeItem('tiergraph.apiKey')");
    await page.goto(`${base}/explorer`);
    await page.getByLabel('API key').fill(TEST_KEY);
    await page.getByRole('button', { name: 'Save key' }).click();
    await page.getByRole('button', { name: /execute query/i }).waitFor();
    expect(await page.evaluate("localStorage.getItem('tiergraph.apiKey')")).toBe(TEST_KEY);
    await page.reload();
    await page.getByRole('button', { name: /execute query/i }).waitFor();
    expect(await page.getByLabel('API key').count()).toBe(0);
  });

  it('renders the API reference from the OpenAPI document', async () => {
    await page.goto(`${base}/docs`);
    await page.locator('.opblock').first().waitFor();
    await shot('docs');
    await accessible('API reference');
  });
});
