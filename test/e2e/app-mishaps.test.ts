import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import {
  describeWithBrowser,
  launchChromium,
  reportPolicyViolations,
  requireBrowser,
  waitInPage,
} from '../support/browser';
import { startTestServer, TEST_KEY } from '../support/server';
import type { TestServer } from '../support/server';
import { buildWebApp } from '../support/web-build';

/**
 * The analyst app when things go less than well: late answers, refused criteria, a server out of
 * reach, keys refused for another reason, keyboard use, a phone's width.
 */
describeWithBrowser('the web app when things go wrong', () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base = '';
  /** A company with suppliers, and one with no cluster. */
  let hub: { vid: string; name: string };

  /** The GraphQL operation a request of the page carries, by its name (`query Company(...)`). */
  const operationOf = (route: Route) =>
    /^\s*(?:query|mutation)\s+(\w+)/.exec(
      (JSON.parse(route.request().postData() ?? '{}') as { query?: string }).query ?? '',
    )?.[1];

  beforeAll(async () => {
    requireBrowser();
    buildWebApp();
    server = await startTestServer({}, 'demo.cypher');
    base = `http://localhost:${server.running.port}`;
    const res = await server.get('/v1/companies/?limit=1');
    hub = ((await res.json()) as { results: { vid: string; name: string }[] }).results[0]!;
    browser = await launchChromium();
  });

  /** What the app's policy refused in the step's pages: nothing, whatever went wrong. */
  const violations: string[] = [];

  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await reportPolicyViolations(context, violations);
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
  });

  afterEach(async () => {
    await context.close();
    expect(violations.splice(0)).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** The accessible label of the element that has focus. */
  const FOCUSED_LABEL = "document.activeElement && document.activeElement.getAttribute('aria-label')";

  /** Opens `path` with the key stored, as after a first visit. */
  const open = async (path: string) => {
    await context.addInitScript(`localStorage.setItem('tiergraph.apiKey', ${JSON.stringify(TEST_KEY)})`);
    await page.goto(`${base}${path}`);
  };

  it('hides what the hidden attribute hides, and tells a key refused for too many attempts as such', async () => {
    await page.goto(`${base}/`);
    await page.getByLabel('API key').waitFor();
    // No key stored: nothing to forget.
    expect(await page.locator('#forget-key').isVisible()).toBe(false);
    await page.route('**/graphql', (route) =>
      route.fulfill({
        status: 429,
        headers: { 'content-type': 'application/problem+json', 'retry-after': '232' },
        body: JSON.stringify({ status: 429, code: 'RATE_LIMITED', detail: 'Too many failed attempts.' }),
      }),
    );
    await page.getByLabel('API key').fill(TEST_KEY);
    await page.getByRole('button', { name: 'Save key' }).click();
    const status = page.getByRole('alert');
    await status.filter({ hasText: 'Try again in 232 s' }).waitFor();
    expect(await status.textContent()).not.toMatch(/does not accept/);
    expect(await page.evaluate("localStorage.getItem('tiergraph.apiKey')")).toBeNull();
  });

  it('keeps the search form when the server refuses the criteria', async () => {
    await open('/?q=acme&offset=100000');
    await page
      .getByRole('alert')
      .filter({ hasText: /offset/ })
      .waitFor();
    expect(await page.getByRole('searchbox', { name: 'Search companies' }).isVisible()).toBe(true);
    expect(await page.getByRole('searchbox', { name: 'Search companies' }).getAttribute('maxlength')).toBe(
      '200',
    );
  });

  it('does not let a late answer replace the page the analyst went back to', async () => {
    const word = hub.name.split(' ')[0]!;
    await open(`/?q=${encodeURIComponent(word)}`);
    const link = page.getByRole('link', { name: hub.name, exact: true });
    await link.waitFor();
    let delayed = 0;
    await page.route('**/graphql', async (route) => {
      if (operationOf(route) !== 'Company') return route.continue();
      delayed++;
      await new Promise((r) => setTimeout(r, 1500));
      await route.continue().catch(() => undefined);
    });
    const answered = page.waitForResponse(
      (r) => r.url().endsWith('/graphql') && (r.request().postData() ?? '').includes('query Company'),
    );
    await link.click();
    await page.waitForURL(/\/companies\//);
    await page.goBack();
    await page.waitForURL((u) => u.pathname === '/');
    // The company's answer comes to a page that was left; a moment to draw it, had it been drawn.
    await answered;
    await page.waitForTimeout(300);
    expect(delayed).toBe(1);
    expect(await page.getByRole('searchbox', { name: 'Search companies' }).isVisible()).toBe(true);
    expect(await page.getByRole('heading', { level: 1, name: hub.name }).count()).toBe(0);
    expect(await page.title()).toMatch(/search/);
  });

  it('skips to the content without drawing the page again', async () => {
    // The export panel asks the server's limits as the page is drawn: that answer first, then count.
    const limits = page.waitForResponse(
      (r) => r.url().endsWith('/graphql') && /TierViewLimits/.test(r.request().postData() ?? ''),
    );
    await open(`/companies/${hub.vid}`);
    await page.getByRole('heading', { level: 1, name: hub.name }).waitFor();
    await limits;
    let asked = 0;
    page.on('request', (r) => {
      if (r.url().endsWith('/graphql')) asked++;
    });
    await page.locator('a.skip').focus();
    await page.keyboard.press('Enter');
    await page.waitForTimeout(500);
    expect(asked).toBe(0);
    expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('main');
  });

  it('says when the server cannot be reached, and gives focus back when the evidence closes', async () => {
    await open(`/companies/${hub.vid}`);
    const suppliers = page.getByRole('region', { name: /Suppliers/ });
    await suppliers.getByRole('row').nth(1).waitFor();
    await page.route('**/graphql', (route) =>
      operationOf(route) === 'Edge' ? route.abort() : route.continue(),
    );
    const opener = suppliers.getByRole('button', { name: /^Evidence: / }).first();
    await opener.click();
    const evidence = page.getByRole('region', { name: 'Evidence' });
    await evidence.getByRole('alert').filter({ hasText: 'cannot be reached' }).waitFor();
    await evidence.getByRole('button', { name: 'Close' }).click();
    const label = await opener.getAttribute('aria-label');
    expect(label).toMatch(/^Evidence: /);
    expect(await page.evaluate(FOCUSED_LABEL)).toBe(label);
  });

  it('keeps the search form and its query when a search cannot reach the server, and asks again', async () => {
    const word = hub.name.split(' ')[0]!;
    let down = true;
    await page.route('**/graphql', (route) =>
      down && operationOf(route) === 'Search' ? route.abort('connectionrefused') : route.continue(),
    );
    await open('/');
    const box = page.getByRole('searchbox', { name: 'Search companies' });
    await box.fill(word);
    await box.press('Enter');
    const results = page.getByRole('region', { name: 'Results' });
    await results.getByRole('alert').filter({ hasText: 'cannot be reached' }).waitFor();
    // The form is still there, with what was typed; the page is no error page.
    expect(await box.inputValue()).toBe(word);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Find a company');
    down = false;
    await results.getByRole('button', { name: 'Try again' }).click();
    await results.getByRole('link', { name: hub.name, exact: true }).waitFor();
  });

  it('titles a company page "Loading" while it loads, and offers to ask again for a list that failed', async () => {
    await open('/');
    await page.getByRole('searchbox', { name: 'Search companies' }).waitFor();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let lists = 0;
    await page.route('**/graphql', async (route) => {
      const op = operationOf(route);
      if (op === 'Company') await held;
      // The first list asked for meets a server that is down for a moment.
      if (op === 'List' && ++lists === 1) return route.abort('connectionrefused');
      return route.continue();
    });
    await page.evaluate(`document.title = 'the page before'`);
    await page.goto(`${base}/companies/${hub.vid}`);
    await waitInPage(page, `document.title === 'Loading… · tiergraph'`);
    release();
    await page.getByRole('heading', { level: 1, name: hub.name }).waitFor();
    const failed = page.getByRole('button', { name: 'Try again' });
    await failed.waitFor();
    expect(await page.getByRole('alert').filter({ hasText: 'cannot be reached' }).count()).toBe(1);
    await failed.click();
    await failed.waitFor({ state: 'detached' });
    // The list asked again comes back (after its "Loading…"), and the message has gone.
    const suppliers = page.getByRole('region', { name: /Suppliers/ });
    await suppliers.getByRole('row').nth(1).waitFor();
    expect(await page.getByRole('alert').filter({ hasText: 'cannot be reached' }).count()).toBe(0);
    expect(await suppliers.getByRole('row').count()).toBeGreaterThan(1);
    const customers = page.getByRole('region', { name: /Customers/ });
    await customers.getByRole('row').nth(1).waitFor();
    expect(await customers.getByRole('row').count()).toBeGreaterThan(1);
  });

  it("tells a relationship's status in words, and closes the evidence on Escape, back to the button that opened it", async () => {
    await open(`/companies/${hub.vid}`);
    const suppliers = page.getByRole('region', { name: /Suppliers/ });
    const opener = suppliers.getByRole('button', { name: /^Evidence: / }).first();
    await opener.click();
    const evidence = page.getByRole('region', { name: 'Evidence' });
    await evidence.getByRole('listitem').first().waitFor();
    // A status in words, not a bare code.
    expect(await evidence.textContent()).toMatch(/ · (active|ended \(kept for history\))/);
    expect(await evidence.textContent()).not.toMatch(/status [12]\b/);
    await page.keyboard.press('Escape');
    await evidence.waitFor({ state: 'hidden' });
    expect(await page.evaluate(FOCUSED_LABEL)).toBe(await opener.getAttribute('aria-label'));
  });

  it('shows the profile fields the API gives: domains, evidence counts, cluster id', async () => {
    const res = await server.get(`/v1/companies/${hub.vid}/`);
    const p = (await res.json()) as {
      domains: string[];
      count_supplier_evidence: number;
      count_customer_evidence: number;
      cid_id: string;
    };
    await open(`/companies/${hub.vid}`);
    const profile = page.getByRole('region', { name: 'Profile' });
    const field = (name: string) => profile.locator(`dt:text-is("${name}") + dd`).textContent();
    expect(p.domains.length).toBeGreaterThan(0);
    expect(await field('Domains')).toBe(p.domains.join(', '));
    expect(await field('Evidence')).toBe(
      `${p.count_supplier_evidence.toLocaleString('en-US')} items on its suppliers, ${p.count_customer_evidence.toLocaleString('en-US')} on its customers`,
    );
    expect(await field('Cluster id')).toBe(p.cid_id);
  });

  it('shows a website or an evidence address from the data that is no web address as text, not as a link', async () => {
    // The importer takes only web addresses; a seed or a graph loaded by other means is not checked.
    const evil = 'javascript:alert(document.domain)';
    await page.route('**/graphql', async (route) => {
      const op = operationOf(route);
      if (op !== 'Company' && op !== 'Edge') return route.continue();
      const res = await route.fetch();
      const body = (await res.json()) as {
        data: {
          company?: { websites: string[] };
          edge?: { evidences: { url: string | null; domain: string | null }[] };
        };
      };
      if (body.data.company) body.data.company.websites = [evil, 'https://www.example.com/'];
      for (const ev of body.data.edge?.evidences ?? []) {
        ev.url = evil;
        ev.domain = null;
      }
      await route.fulfill({ response: res, json: body });
    });
    await open(`/companies/${hub.vid}`);
    const websites = page.getByRole('region', { name: 'Profile' }).locator('dt:text-is("Websites") + dd');
    await websites.waitFor();
    expect(await websites.textContent()).toBe(`${evil}, https://www.example.com/`);
    expect(await websites.getByRole('link').count()).toBe(1);
    expect(await websites.getByRole('link').getAttribute('href')).toBe('https://www.example.com/');

    await page
      .getByRole('region', { name: /Suppliers/ })
      .getByRole('button', { name: /^Evidence: / })
      .first()
      .click();
    const evidence = page.getByRole('region', { name: 'Evidence' });
    await evidence.getByRole('listitem').first().waitFor();
    expect(await evidence.getByRole('listitem').first().textContent()).toContain(evil);
    expect(await page.locator('a[href^="javascript:" i]').count()).toBe(0);
    expect(await evidence.getByRole('link').count()).toBe(0);
  });

  it('applies a typed date on Enter, not at its first digit, and takes any confidence', async () => {
    await open(`/companies/${hub.vid}/map`);
    const figure = page.getByRole('figure', { name: 'Tier map' });
    await figure.and(page.locator('[data-nodes]')).waitFor();
    const date = page.getByLabel('Evidence after');
    await date.focus();
    // A whole date, typed digit by digit: each digit of the year made a date the map was drawn for.
    await page.keyboard.type('01022024', { delay: 30 });
    await page.waitForTimeout(500);
    expect(new URL(page.url()).searchParams.get('date')).toBeNull();
    expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('map-date');
    await date.press('Enter');
    await page.waitForURL(/date=2024-01-02/);
    await figure.and(page.locator('[data-nodes]')).waitFor();

    // Typed as the percentage the map shows; the address keeps the API's fraction.
    const confidence = page.getByLabel('Min. confidence (%)');
    await confidence.fill('93');
    await confidence.press('Enter');
    await page.waitForURL(/confidence=0\.93/);
    await figure.and(page.locator('[data-nodes]')).waitFor();
    // The redrawn form has focus where the analyst left it.
    expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('map-confidence');
    expect(await page.locator('#map-summary').textContent()).not.toMatch(/\b1 companies\b/);
    // A value edited into the address that the lists do not offer is shown as drawn.
    await page.goto(`${base}/companies/${hub.vid}/map?per=7&max=20`);
    await figure.and(page.locator('[data-nodes]')).waitFor();
    expect(await page.getByLabel('Strongest per company').inputValue()).toBe('7');
    expect(await page.getByLabel('Companies at most').inputValue()).toBe('20');
    await page.goto(`${base}/companies/${hub.vid}/map?confidence=0.07`);
    await figure.and(page.locator('[data-nodes]')).waitFor();
    expect(await page.getByLabel('Min. confidence (%)').inputValue()).toBe('7');
  });

  it('moves through suggestions by keyboard, closes them on a click elsewhere, and starts results at the content', async () => {
    await open('/');
    const box = page.getByRole('searchbox', { name: 'Search companies' });
    await box.pressSequentially(hub.name.split(' ')[0]!.slice(0, 5), { delay: 30 });
    const first = page.locator('#suggestions:not([hidden]) a').first();
    await first.waitFor();
    // A screen reader sees no list appear: a status says how many there are and how to reach them.
    const shown = await page.locator('#suggestions a').count();
    const status = page.getByRole('status').filter({ hasText: 'press the down arrow' });
    expect(await status.textContent()).toBe(
      shown === 1
        ? '1 suggestion: press the down arrow to reach it, Escape to close.'
        : `${shown} suggestions: press the down arrow to reach them, Escape to close.`,
    );
    expect(await box.getAttribute('aria-describedby')).toBe('suggestions-hint');
    await box.press('ArrowDown');
    expect(await page.evaluate('document.activeElement && document.activeElement.textContent')).toBe(
      await first.textContent(),
    );
    await page.keyboard.press('ArrowUp');
    expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('search-box');
    await page.getByRole('heading', { name: 'Find a company' }).click();
    await page.locator('#suggestions[hidden]').waitFor({ state: 'attached' });
    expect(await page.locator('#suggestions-status').textContent()).toBe('');
    await box.press('Enter');
    await page.waitForURL(/\?q=/);
    await page.getByRole('link', { name: hub.name, exact: true }).waitFor();
    expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('main');
  });

  it('closes the suggestions when Tab takes focus past them, so they cover no field', async () => {
    await open('/');
    const box = page.getByRole('searchbox', { name: 'Search companies' });
    const typed = hub.name.split(' ')[0]!.slice(0, 5);
    await box.pressSequentially(typed, { delay: 30 });
    await page.locator('#suggestions:not([hidden]) a').first().waitFor();
    // Down into the list, then Tab through it and out of it.
    await box.press('ArrowDown');
    const count = await page.locator('#suggestions a').count();
    for (let i = 0; i < count; i++) await page.keyboard.press('Tab');
    await page.locator('#suggestions[hidden]').waitFor({ state: 'attached' });
    // The field focus went to is the one on top where it is drawn.
    const onTop = `(() => {
      const a = document.activeElement;
      const r = a.getBoundingClientRect();
      const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      return a !== document.body && (at === a || a.contains(at));
    })()`;
    expect(await page.evaluate(onTop)).toBe(true);
    // From the box itself too, and suggestions still on their way are not shown afterwards.
    await box.fill('');
    await box.pressSequentially(typed, { delay: 30 });
    await page.locator('#suggestions:not([hidden]) a').first().waitFor();
    await box.press('Backspace');
    await box.press('Tab');
    await page.waitForTimeout(1000);
    expect(await page.locator('#suggestions').isHidden()).toBe(true);
    expect(await page.evaluate(onTop)).toBe(true);
  });

  it('draws the keyboard focus in a colour that stands out from the cards and the page (3:1 at least)', async () => {
    await open(`/companies/${hub.vid}`);
    const button = page
      .getByRole('region', { name: /Suppliers/ })
      .getByRole('button', { name: /^Evidence: / });
    await button.first().waitFor();
    await button.first().focus();
    // Contrast as WCAG defines it, of the outline against the card it is drawn on and the page.
    const ratios = await page.evaluate(`(() => {
      const rgb = (c) => c.match(/\\d+(\\.\\d+)?/g).slice(0, 3).map(Number);
      const lum = (c) => {
        const [r, g, b] = rgb(c).map((v) => {
          const s = v / 255;
          return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
        });
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
      };
      const ratio = (a, b) => {
        const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
        return (x + 0.05) / (y + 0.05);
      };
      const focused = document.activeElement;
      const outline = getComputedStyle(focused).outlineColor;
      const card = getComputedStyle(focused.closest('.card')).backgroundColor;
      const body = getComputedStyle(document.documentElement).backgroundColor;
      return [getComputedStyle(focused).outlineStyle, ratio(outline, card), ratio(outline, body)];
    })()`);
    const [style, onCard, onPage] = ratios as [string, number, number];
    expect(style).toBe('solid');
    expect(onCard).toBeGreaterThanOrEqual(3);
    expect(onPage).toBeGreaterThanOrEqual(3);
  });

  it('fits a phone: nothing wider than the screen', async () => {
    await page.setViewportSize({ width: 375, height: 700 });
    await open(`/companies/${hub.vid}`);
    await page
      .getByRole('region', { name: /Suppliers/ })
      .getByRole('row')
      .nth(1)
      .waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    expect(await page.getByRole('link', { name: 'API reference' }).isVisible()).toBe(true);
    // Each row's evidence button is within its card, not behind a sideways scroll.
    const card = await page.getByRole('region', { name: /Suppliers/ }).boundingBox();
    const button = await page
      .getByRole('button', { name: /^Evidence: / })
      .first()
      .boundingBox();
    expect(button!.x + button!.width).toBeLessThanOrEqual(card!.x + card!.width);
    // So in every list of the companies with the most relationships: no card scrolls sideways.
    const listed = (await (await server.get('/v1/companies/?limit=8')).json()) as {
      results: { vid: string }[];
    };
    for (const { vid } of listed.results) {
      await page.goto(`${base}/companies/${vid}`);
      await page.getByRole('heading', { level: 1 }).waitFor();
      for (const side of ['Suppliers', 'Customers']) {
        const region = page.getByRole('region', { name: new RegExp(`^${side}`) });
        await region.locator('table, p.muted:not(.small)').first().waitFor();
        const sideways = await region.evaluate(
          (e: { scrollWidth: number; clientWidth: number }) => e.scrollWidth - e.clientWidth,
        );
        expect(`${vid} ${side} ${sideways}`).toBe(`${vid} ${side} 0`);
      }
    }
    // Search results too, every column on the screen rather than behind a sideways scroll.
    await page.goto(`${base}/?q=${encodeURIComponent('Precision Components')}`);
    await page.getByRole('region', { name: 'Results' }).getByRole('row').nth(1).waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    const results = page.getByRole('region', { name: 'Results' });
    const overflow = await results.evaluate(
      (e: { scrollWidth: number; clientWidth: number }) => e.scrollWidth - e.clientWidth,
    );
    expect(overflow).toBe(0);
    // The map's heading has the width of the screen, not a column beside the links.
    await page.goto(`${base}/companies/${hub.vid}/map`);
    const heading = page.getByRole('heading', { level: 1 });
    await heading.waitFor();
    expect((await heading.boundingBox())!.width).toBeGreaterThan(300);
    // Where a form wraps, each label stays on the line of its field.
    const apart = `[...document.querySelectorAll('.filters label[for]')]
      .filter((l) => l.offsetParent !== null)
      .filter((l) => {
        const a = l.getBoundingClientRect();
        const b = document.getElementById(l.htmlFor).getBoundingClientRect();
        return Math.abs(a.top + a.bottom - b.top - b.bottom) / 2 > Math.max(a.height, b.height) / 2;
      })
      .map((l) => l.textContent)`;
    await page.locator('.map-filters').waitFor();
    expect(await page.evaluate(apart)).toEqual([]);
    await page.goto(`${base}/companies/${hub.vid}`);
    await page
      .getByRole('region', { name: /Suppliers/ })
      .getByRole('row')
      .nth(1)
      .waitFor();
    expect(await page.evaluate(apart)).toEqual([]);
  });

  it("keeps the tier map's tip on a phone's screen, for the company nearest its right edge too", async () => {
    await page.setViewportSize({ width: 375, height: 700 });
    await open(`/companies/${hub.vid}/map`);
    const figure = page.getByRole('figure', { name: 'Tier map' });
    await figure.and(page.locator('[data-nodes]')).waitFor();
    await figure.scrollIntoViewIfNeeded();
    const box = (await figure.boundingBox())!;
    const tipShown = "!!document.querySelector('.tip:not([hidden])')";
    // From the right edge leftwards, row by row: the first company the pointer meets is near the edge.
    let found = false;
    for (let x = box.x + box.width - 4; x > box.x && !found; x -= 6)
      for (let y = box.y + 4; y < box.y + box.height && !found; y += 8) {
        await page.mouse.move(x, y);
        found = await page.evaluate<boolean>(tipShown);
      }
    expect(found).toBe(true);
    const tip = (await page.locator('.tip').boundingBox())!;
    expect(tip.x).toBeGreaterThanOrEqual(0);
    expect(tip.x + tip.width).toBeLessThanOrEqual(375);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
  });

  it('offers download links on the name the app was opened by', async () => {
    // The server names itself localhost (no PUBLIC_URL); the analyst came by 127.0.0.1.
    const other = `http://127.0.0.1:${server.running.port}`;
    await context.addInitScript(`localStorage.setItem('tiergraph.apiKey', ${JSON.stringify(TEST_KEY)})`);
    await page.goto(`${other}/companies/${hub.vid}`);
    const panel = page.getByRole('region', { name: 'Export tier view' });
    await panel.getByLabel('Tiers').selectOption('1');
    await panel.getByRole('button', { name: 'Start export' }).click();
    const link = panel.getByRole('link', { name: /^Download / });
    await link.waitFor({ timeout: 30_000 });
    const href = (await link.getAttribute('href'))!;
    expect(new URL(href).origin).toBe(other);
    const got = await page.evaluate(`fetch(${JSON.stringify(href)}).then((r) => r.status)`);
    expect(got).toBe(200);
  });

  it('goes back to where a long list was left, and starts a new page at its top', async () => {
    await page.setViewportSize({ width: 1280, height: 400 });
    await open('/?country=China');
    const rows = page.locator('table.list tbody tr');
    await rows.nth(5).waitFor();
    const last = rows.last().getByRole('link').first();
    await last.scrollIntoViewIfNeeded();
    const left = await page.evaluate<number>('window.scrollY');
    expect(left).toBeGreaterThan(200);
    await last.click();
    await page.waitForURL(/\/companies\//);
    await page.getByRole('heading', { level: 1 }).waitFor();
    expect(await page.evaluate('window.scrollY')).toBe(0);
    await page.goBack();
    await rows.nth(5).waitFor();
    await waitInPage(page, `window.scrollY === ${left}`);
    // And forward again: the company page, where it was (its top).
    await page.goForward();
    await page.waitForURL(/\/companies\//);
    await page.getByRole('heading', { level: 1 }).waitFor();
    expect(await page.evaluate('window.scrollY')).toBe(0);
  });

  it('labels each date filter by the days it keeps: lists after the day, exports from the day on', async () => {
    await open(`/companies/${hub.vid}`);
    const exportPanel = page.getByRole('region', { name: 'Export tier view' });
    await exportPanel.getByLabel('Evidence on or after', { exact: true }).waitFor();
    expect(await exportPanel.getByLabel('Evidence after', { exact: true }).count()).toBe(0);
    const customers = page.getByRole('region', { name: /Customers/ });
    expect(await customers.getByLabel('Evidence after', { exact: true }).count()).toBe(1);
  });

  it('offers as many export tiers as the server takes', async () => {
    // A server set to MAX_TIERS=9 says so (the test server keeps the default, 6).
    await page.route('**/graphql', (route) =>
      operationOf(route) === 'TierViewLimits'
        ? route.fulfill({ json: { data: { tierViewLimits: { max_tiers: 9 } } } })
        : route.continue(),
    );
    await open(`/companies/${hub.vid}`);
    const tiers = page.getByRole('region', { name: 'Export tier view' }).getByLabel('Tiers');
    await tiers.locator('option[value="9"]').waitFor({ state: 'attached' });
    expect(await tiers.locator('option').allTextContents()).toEqual([
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
      '7',
      '8',
      '9',
    ]);
    expect(await tiers.inputValue()).toBe('2');
  });

  it('shows a kept run as deep as it went, and keeps a choice within what the server takes', async () => {
    const keep = (tiers: string) =>
      context.addInitScript(
        `sessionStorage.setItem('tiergraph.export.${hub.vid}', ${JSON.stringify(
          JSON.stringify({
            run_id: '99999',
            direction: 'supplier',
            tiers,
            since: '',
            multiple: false,
            excel: false,
          }),
        )})`,
      );
    let limits: number | null = null;
    await page.route('**/graphql', (route) =>
      operationOf(route) !== 'TierViewLimits'
        ? route.continue()
        : limits === null
          ? route.abort('connectionrefused')
          : route.fulfill({ json: { data: { tierViewLimits: { max_tiers: limits } } } }),
    );
    const tiers = page.getByRole('region', { name: 'Export tier view' }).getByLabel('Tiers');
    // The server's limits cannot be asked: the kept run's 9 tiers are still shown.
    await keep('9');
    await open(`/companies/${hub.vid}`);
    await tiers.locator('option[value="9"]').waitFor({ state: 'attached' });
    expect(await tiers.inputValue()).toBe('9');
    // A server that takes 3: the deepest it takes.
    limits = 3;
    await page.reload();
    // Not only until the old page's options are gone: the new page's first render offers the kept
    // run's 9 tiers until the server's answer narrows them.
    for (const end = Date.now() + 15_000; (await tiers.locator('option').count()) !== 3;) {
      if (Date.now() > end) break;
      await page.waitForTimeout(50);
    }
    expect(await tiers.locator('option').allTextContents()).toEqual(['1', '2', '3']);
    expect(await tiers.inputValue()).toBe('3');
  });

  it('follows an export through a passing outage, and cancels it', async () => {
    let polls = 0;
    let cancelled = false;
    const running = { life_cycle_state: 'RUNNING', state_message: 'tier 1 of 2' };
    const ended = {
      life_cycle_state: 'TERMINATED',
      result_state: 'CANCELED',
      state_message: 'Cancelled by the user.',
    };
    await page.route('**/v1/tierviewjob/', (route) =>
      route.fulfill({ status: 200, contentType: 'application/json', body: '{"run_id":"77"}' }),
    );
    await page.route('**/v1/jobs/77/cancel', (route) => {
      cancelled = true;
      return route.fulfill({ status: 200, contentType: 'application/json', body: '{}' });
    });
    await page.route('**/v1/jobs/77/', (route) => {
      ++polls;
      // The first poll meets a server that is down for a moment; the second a proxy's 502 that asks
      // for no wait at all (the page waits a second anyway).
      if (polls === 1) return route.abort('connectionrefused');
      if (polls === 2)
        return route.fulfill({
          status: 502,
          headers: { 'retry-after': '0', 'content-type': 'application/problem+json' },
          body: JSON.stringify({ status: 502, detail: 'Upstream restarting' }),
        });
      return route.fulfill({
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ run_id: '77', state: cancelled ? ended : running, output: null }),
      });
    });
    await open(`/companies/${hub.vid}`);
    const panel = page.getByRole('region', { name: 'Export tier view' });
    await panel.getByRole('button', { name: 'Start export' }).click();
    await panel.getByText('Run 77: the server cannot be reached. Asking again in 2 s.').waitFor();
    await panel.getByText('Run 77: Upstream restarting. Asking again in 1 s.').waitFor();
    await panel.getByText('Run 77: running · tier 1 of 2').waitFor();
    await panel.getByRole('button', { name: 'Cancel run' }).click();
    await panel.getByText('Run 77 ended CANCELED: Cancelled by the user.').waitFor();
    expect(cancelled).toBe(true);
  });

  it('starts an export once when its answer was lost and the analyst starts it again', async () => {
    await open(`/companies/${hub.vid}`);
    const panel = page.getByRole('region', { name: 'Export tier view' });
    await panel.getByLabel('Tiers').selectOption('1');
    const startButton = panel.getByRole('button', { name: 'Start export' });
    // The server starts the run, and the answer is lost on the way back.
    let lost: { key: string | undefined; runId: number } | null = null;
    await page.route('**/v1/tierviewjob/', async (route) => {
      const answer = await route.fetch();
      lost = {
        key: route.request().headers()['idempotency-key'],
        runId: ((await answer.json()) as { run_id: number }).run_id,
      };
      await route.abort('connectionreset');
    });
    await startButton.click();
    await panel.getByRole('alert').waitFor();
    await page.unroute('**/v1/tierviewjob/');
    expect(lost).not.toBeNull();
    const first = lost as unknown as { key: string | undefined; runId: number };
    expect(first.key).toMatch(/^[0-9a-f]{32}$/);

    const again = page.waitForResponse((r) => r.url().endsWith('/v1/tierviewjob/'));
    await startButton.click();
    const replayed = await again;
    expect(replayed.request().headers()['idempotency-key']).toBe(first.key);
    expect(replayed.status()).toBe(200);
    expect(replayed.headers()['idempotent-replayed']).toBe('true');
    expect(((await replayed.json()) as { run_id: number }).run_id).toBe(first.runId);
    await panel
      .getByRole('link', { name: /^Download / })
      .first()
      .waitFor({ timeout: 30_000 });
    expect(await panel.textContent()).toContain(`Run ${first.runId} finished`);

    // Answered once, the same options start a new run.
    const next = page.waitForResponse((r) => r.url().endsWith('/v1/tierviewjob/'));
    await startButton.click();
    const started = await next;
    expect(started.request().headers()['idempotency-key']).not.toBe(first.key);
    expect(started.headers()['idempotent-replayed']).toBeUndefined();
    expect(((await started.json()) as { run_id: number }).run_id).not.toBe(first.runId);
  });

  /** The tab's next export start answers run `runId`, which has finished with `message` and one file at `link`. */
  async function finishesAt(tab: Page, runId: number, message: string, link: string): Promise<void> {
    await tab.route('**/v1/tierviewjob/', (route) =>
      route.fulfill({
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ run_id: runId }),
      }),
    );
    await tab.route(`**/v1/jobs/${runId}/`, (route) =>
      route.fulfill({
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({
          run_id: String(runId),
          state: { life_cycle_state: 'TERMINATED', result_state: 'SUCCESS', state_message: message },
          output: { result: JSON.stringify({ tierview_file: link }), truncated: false },
        }),
      }),
    );
  }

  it("says until when a finished run's links work, from the links themselves", async () => {
    // Its own clock and language, so that the time it shows is known.
    const utc = await browser.newContext({
      locale: 'en-GB',
      timezoneId: 'UTC',
      viewport: { width: 1280, height: 900 },
    });
    try {
      await utc.addInitScript(`localStorage.setItem('tiergraph.apiKey', ${JSON.stringify(TEST_KEY)})`);
      const tab = await utc.newPage();
      tab.setDefaultTimeout(15_000);
      // Cloud Storage's signed links: signed at 14:00 on 2 January 2030, for an hour.
      const gcs =
        'https://storage.googleapis.com/b/runs/88/tierview.csv?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Date=20300102T140000Z&X-Goog-Expires=3600&X-Goog-Signature=ab';
      await finishesAt(tab, 88, '', gcs);
      await tab.goto(`${base}/companies/${hub.vid}`);
      const panel = tab.getByRole('region', { name: 'Export tier view' });
      await panel.getByRole('button', { name: 'Start export' }).click();
      await panel
        .getByText('Run 88 finished. The links work until 2 Jan, 15:00; download before then:')
        .waitFor();
    } finally {
      await utc.close();
    }
  });

  it("shows what a finished run's state says of its files, such as that nothing matched", async () => {
    const message = 'no relationship matched the request';
    await finishesAt(page, 89, message, `${base}/downloads/x.csv`);
    try {
      await open(`/companies/${hub.vid}`);
      const panel = page.getByRole('region', { name: 'Export tier view' });
      await panel.getByRole('button', { name: 'Start export' }).click();
      await panel.getByText(`Run 89 finished: ${message}.`).waitFor();
    } finally {
      await page.unrouteAll();
    }
  });

  it('finds an export again after the analyst went elsewhere, with the options it was started with', async () => {
    await open(`/companies/${hub.vid}`);
    const panel = page.getByRole('region', { name: 'Export tier view' });
    await panel.getByLabel('Tiers').selectOption('1');
    await panel.getByLabel('Three files').check();
    await panel.getByRole('button', { name: 'Start export' }).click();
    await panel
      .getByRole('link', { name: /^Download / })
      .first()
      .waitFor({ timeout: 30_000 });
    // This server's own links say when they expire too.
    expect(await panel.textContent()).toMatch(
      /The links work until [^;]*\d{2}:\d{2}[^;]*; download before then:/,
    );
    await page.getByRole('link', { name: 'Search' }).click();
    await page.getByRole('searchbox', { name: 'Search companies' }).waitFor();
    await page.goBack();
    await panel
      .getByRole('link', { name: /^Download / })
      .first()
      .waitFor();
    // The panel shows what the files hold, not its defaults.
    expect(await panel.getByLabel('Tiers').inputValue()).toBe('1');
    expect(await panel.getByLabel('Three files').isChecked()).toBe(true);
    expect(await panel.getByRole('link', { name: /^Download / }).count()).toBe(3);
    // Options changed since: the files are said to be of the run's own options, until they are back.
    const note = panel.getByText(/^The files below are of run \d+, started with other options/);
    expect(await note.isVisible()).toBe(false);
    await panel.getByLabel('Tiers').selectOption('2');
    await note.waitFor();
    await panel.getByLabel('Tiers').selectOption('1');
    await note.waitFor({ state: 'hidden' });
    await panel.getByLabel('Three files').uncheck();
    await note.waitFor();
  });

  it('refuses a wrong key in the explorer without keeping it', async () => {
    await page.goto(`${base}/explorer`);
    await page.getByLabel('API key').fill('wrong-key-0000000000000000');
    await page.getByRole('button', { name: 'Save key' }).click();
    await page.getByRole('alert').filter({ hasText: 'The server does not accept this key' }).waitFor();
    expect(await page.evaluate("localStorage.getItem('tiergraph.apiKey')")).toBeNull();
    expect(await page.getByRole('button', { name: /execute query/i }).count()).toBe(0);
  });

  it('asks again in the explorer for a stored key the server no longer accepts', async () => {
    await page.goto(`${base}/explorer`);
    await page.evaluate("localStorage.setItem('tiergraph.apiKey', 'revoked-key-000000000000')");
    let refused = 0;
    page.on('response', (r) => {
      if (r.url().endsWith('/graphql') && r.status() === 403) refused++;
    });
    await page.reload();
    await page.getByRole('alert').filter({ hasText: 'no longer accepts the stored key' }).waitFor();
    expect(await page.evaluate("localStorage.getItem('tiergraph.apiKey')")).toBeNull();
    expect(refused).toBeGreaterThan(0);
    // Forgotten: the next visit asks for a key instead of being refused again.
    const before = refused;
    await page.reload();
    await page.getByLabel('API key').waitFor();
    expect(refused).toBe(before);
  });

  it('sends the key written in the explorer headers editor instead of the stored one, not both', async () => {
    await open('/explorer');
    await page.getByRole('button', { name: /execute query/i }).waitFor();
    await page.getByRole('button', { name: 'Headers' }).click();
    const editor = page.locator('.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror');
    await editor.click();
    // Another key than the stored one: the one that arrives tells which was sent.
    await page.keyboard.insertText(JSON.stringify({ 'x-service-key': 'other-key-0000000000000000' }));
    await editor.getByText('x-service-key').waitFor();
    const ran = page.waitForResponse(
      (r) => r.url().endsWith('/graphql') && (r.request().postData() ?? '').includes('FindSuppliers'),
    );
    await page.getByRole('button', { name: /execute query/i }).click();
    const res = await ran;
    expect([res.status(), res.request().headers()['x-service-key']]).toEqual([
      403,
      'other-key-0000000000000000',
    ]);
    // The key the analyst wrote was refused, not the stored one: that stays.
    expect(await page.evaluate("localStorage.getItem('tiergraph.apiKey')")).toBe(TEST_KEY);
  });

  it('gives each company on the tier map the date of the relationships that bring it in, also from the keyboard', async () => {
    const answered = page.waitForResponse(
      (r) => r.url().endsWith('/graphql') && (r.request().postData() ?? '').includes('query TierMap'),
    );
    await open(`/companies/${hub.vid}/map`);
    const m = (
      (await (await answered).json()) as {
        data: {
          tierMap: {
            root: string;
            nodes: { vid: string; name: string; tier: number }[];
            edges: { supplier_id: string; customer_id: string; latest_relationship_date: string | null }[];
          };
        };
      }
    ).data.tierMap;
    const named = (name: string) => m.nodes.filter((n) => n.name === name).length === 1;
    const tier1 = m.nodes.filter((n) => n.tier === 1 && named(n.name)).slice(0, 6);
    expect(tier1.length).toBeGreaterThan(1);
    await page.getByText('Companies in this map, by tier').click();
    const aside = page.getByRole('complementary', { name: 'Selected company' });
    for (const n of tier1) {
      // In a supplier map a company comes in as the supplier of one a tier nearer the root (here
      // the root); the dates of its own suppliers, and of companies of its own tier it supplies,
      // are not its link's.
      const dates = m.edges
        .filter((e) => e.supplier_id === n.vid && e.customer_id === m.root)
        .map((e) => e.latest_relationship_date ?? '')
        .sort();
      const expected = dates.at(-1)?.slice(0, 10) || '—';
      await page.getByRole('button', { name: `Details: ${n.name}` }).click();
      await aside.getByRole('heading', { name: n.name }).waitFor();
      expect(await page.evaluate('document.activeElement.textContent')).toBe(n.name);
      const shown = await aside.locator('dt:text-is("Latest evidence") + dd').textContent();
      expect([n.name, shown]).toEqual([n.name, expected]);
      // And back to the list, to the company's own button, for the next one.
      await aside.getByRole('button', { name: 'Back to the list' }).click();
      expect(await page.evaluate(FOCUSED_LABEL)).toBe(`Details: ${n.name}`);
    }
  });

  it('says why a map shows no relationship, and what to do when it stops at the most it draws', async () => {
    const res = await server.get('/v1/companies/?limit=100');
    const all = ((await res.json()) as { results: { vid: string; name: string; count_customers: number }[] })
      .results;
    const none = all.find((c) => c.count_customers === 0)!;
    await open(`/companies/${none.vid}/map?direction=customer`);
    const summary = page.locator('#map-summary');
    await summary.getByText(`${none.name} has no customers in the data; try the other direction.`).waitFor();
    // The test graph is too small to fill 500 places: the server's answer says it stopped there.
    await page.route('**/graphql', async (route) => {
      if (operationOf(route) !== 'TierMap') return route.continue();
      const answer = await route.fetch();
      const body = (await answer.json()) as { data: { tierMap: { truncated: boolean } } };
      body.data.tierMap.truncated = true;
      return route.fulfill({ response: answer, json: body });
    });
    await page.goto(`${base}/companies/${hub.vid}/map?max=500`);
    await summary
      .getByText('The map stopped at 500 companies, the most it draws;', { exact: false })
      .waitFor();
    expect(await summary.textContent()).not.toMatch(/raise the limit/);
    // The listing's headings come under the page's h1.
    expect(await page.locator('details h3').count()).toBe(0);
    expect(await page.locator('details h2').count()).toBeGreaterThan(0);
  });

  it('gives the tier map the width of a wide screen', async () => {
    await page.setViewportSize({ width: 2560, height: 1300 });
    await open(`/companies/${hub.vid}/map`);
    const figure = page.getByRole('figure', { name: 'Tier map' });
    await figure.and(page.locator('[data-nodes]')).waitFor();
    expect((await figure.boundingBox())!.width).toBeGreaterThan(1800);
    // Other pages keep their reading width.
    await page.goto(`${base}/companies/${hub.vid}`);
    const profile = page.getByRole('region', { name: 'Profile' });
    await profile.waitFor();
    expect((await page.locator('main').boundingBox())!.width).toBeLessThan(1300);
  });

  it('scrolls the page with the wheel over the map, and zooms the map with Ctrl and the wheel', async () => {
    await page.setViewportSize({ width: 1280, height: 500 });
    await open(`/companies/${hub.vid}/map`);
    const figure = page.getByRole('figure', { name: 'Tier map' });
    await figure.and(page.locator('[data-nodes]')).waitFor();
    const overMap = async () => {
      const box = (await figure.boundingBox())!;
      const top = Math.max(box.y, 0);
      const bottom = Math.min(box.y + box.height, 500);
      expect(bottom - top).toBeGreaterThan(40);
      await page.mouse.move(box.x + box.width / 2, (top + bottom) / 2);
    };
    await overMap();
    const before = await page.evaluate<number>('window.scrollY');
    await page.mouse.wheel(0, 200);
    await waitInPage(page, `window.scrollY > ${before}`);
    // With Ctrl the map takes the wheel, and the page stays where it is (once the scroll has settled).
    let at = -1;
    for (let now = 0; now !== at; await page.waitForTimeout(250)) {
      at = now;
      now = await page.evaluate<number>('window.scrollY');
    }
    await overMap();
    await page.keyboard.down('Control');
    await page.mouse.wheel(0, 200);
    await page.keyboard.up('Control');
    await page.waitForTimeout(300);
    expect(await page.evaluate('window.scrollY')).toBe(at);
    expect(await page.getByRole('complementary', { name: 'Selected company' }).textContent()).toContain(
      'Ctrl and the wheel zoom',
    );
  });

  it('keeps a tier map whose address has an impossible date, without the date', async () => {
    await open(`/companies/${hub.vid}/map?date=2020-13-45`);
    await page.getByRole('figure', { name: 'Tier map' }).waitFor();
    expect(await page.getByLabel('Evidence after').inputValue()).toBe('');
  });

  it("tells a refusal that is not GraphQL's own in the server's words", async () => {
    await page.route('**/graphql', (route) =>
      route.fulfill({
        status: 429,
        headers: { 'content-type': 'application/problem+json', 'retry-after': '12' },
        body: JSON.stringify({
          status: 429,
          code: 'RATE_LIMITED',
          detail: 'Too many requests; retry after 12 s.',
        }),
      }),
    );
    await open(`/companies/${hub.vid}`);
    await page.getByRole('alert').filter({ hasText: 'Too many requests; retry after 12 s.' }).waitFor();
    expect(await page.getByText('The server returned no data').count()).toBe(0);
  });

  it('says the key was forgotten, not refused, when another tab forgot it', async () => {
    await open(`/companies/${hub.vid}`);
    const suppliers = page.getByRole('region', { name: /Suppliers/ });
    await suppliers.getByRole('row').nth(1).waitFor();
    // What "Forget API key" in another tab of the site leaves in this one's storage.
    await page.evaluate("localStorage.removeItem('tiergraph.apiKey')");
    await suppliers
      .getByRole('button', { name: /^Evidence: / })
      .first()
      .click();
    const alert = page.getByRole('alert').filter({ hasText: 'forgotten' });
    await alert.waitFor();
    expect(await alert.textContent()).toBe(
      'The API key was forgotten in this browser (in another tab, perhaps). Enter it again to go on.',
    );
    // And the page comes back once it is entered.
    await page.getByLabel('API key').fill(TEST_KEY);
    await page.getByRole('button', { name: 'Save key' }).click();
    await page
      .getByRole('region', { name: /Suppliers/ })
      .getByRole('row')
      .nth(1)
      .waitFor();
  });

  it('asks for another key when one part of a page finds the stored key revoked', async () => {
    await open(`/companies/${hub.vid}`);
    const suppliers = page.getByRole('region', { name: /Suppliers/ });
    await suppliers.getByRole('row').nth(1).waitFor();
    await page.route('**/graphql', (route) =>
      operationOf(route) === 'List'
        ? route.fulfill({
            status: 403,
            headers: { 'content-type': 'application/problem+json' },
            body: JSON.stringify({ status: 403, code: 'FORBIDDEN', detail: 'The API key is revoked.' }),
          })
        : route.continue(),
    );
    await suppliers.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('alert').filter({ hasText: 'The server refused the stored key' }).waitFor();
    expect(await page.getByLabel('API key').isVisible()).toBe(true);
    expect(await page.title()).toBe('API key · tiergraph');
    expect(await page.evaluate("localStorage.getItem('tiergraph.apiKey')")).toBeNull();
  });

  /** The company among the first 100 with the most customers (more than a page of them). */
  const bigSupplier = async () => {
    const res = await server.get('/v1/companies/?limit=100');
    const all = ((await res.json()) as { results: { vid: string; count_customers: number }[] }).results;
    const big = all.reduce((a, b) => (b.count_customers > a.count_customers ? b : a));
    expect(big.count_customers).toBeGreaterThan(10);
    return big;
  };

  it('pages through the filters as applied, not as typed since, and keeps focus on the pager', async () => {
    const { vid, count_customers: count } = await bigSupplier();
    await open(`/companies/${vid}`);
    const customers = page.getByRole('region', { name: /Customers/ });
    await customers.getByRole('button', { name: 'Next' }).waitFor();
    // Typed, not applied: no customer of this one has evidence that late.
    await customers.getByLabel('Evidence after').fill('2099-01-01');
    await customers.getByRole('button', { name: 'Next' }).focus();
    await page.keyboard.press('Enter');
    await customers.getByText('11–').waitFor();
    const res = await server.get(`/v1/companies/${vid}/customers/?offset=10&limit=10`);
    const expected = ((await res.json()) as { results: { customer: { name: string } }[] }).results[0]
      ?.customer.name;
    expect(await customers.getByRole('row').nth(1).getByRole('link').first().textContent()).toBe(expected);
    // The same button where the second page has one, else the other.
    expect(await page.evaluate('document.activeElement.textContent')).toBe(count > 20 ? 'Next' : 'Previous');
  });

  it("keeps a list's page and filters in the address, so that a copied link opens the list as shown", async () => {
    const { vid } = await bigSupplier();
    await open(`/companies/${vid}`);
    const names = (p: Page) =>
      p
        .getByRole('region', { name: /Customers/ })
        .locator('tbody tr td:first-child a')
        .allTextContents();
    const customers = page.getByRole('region', { name: /Customers/ });
    await customers.getByRole('button', { name: 'Next' }).waitFor();
    // The first page unfiltered adds nothing to the address.
    expect(new URL(page.url()).search).toBe('');
    await customers.getByLabel('Min. confidence (%)').fill('1');
    await customers.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/customers_c=0\.01/);
    await customers.getByRole('button', { name: 'Next' }).click();
    await page.waitForURL(/customers_offset=10/);
    await customers.getByText(/^11–/).waitFor();
    const shown = await names(page);
    expect(shown.length).toBeGreaterThan(0);

    // Another tab, with no history of its own: the same page, the same filter.
    const other = await context.newPage();
    await other.goto(page.url());
    const there = other.getByRole('region', { name: /Customers/ });
    await there.getByText(/^11–/).waitFor();
    expect(await names(other)).toEqual(shown);
    expect(await there.getByLabel('Min. confidence (%)').inputValue()).toBe('1');
    // Back to the first page unfiltered: the address drops what it no longer needs.
    await there.getByLabel('Min. confidence (%)').fill('0');
    await there.getByRole('button', { name: 'Filter' }).click();
    await other.waitForURL((u) => u.search === '');
    await other.close();
  });

  it('comes back to the list page and the place it was left at, after Back and after a reload', async () => {
    const { vid, count_customers: count } = await bigSupplier();
    await open(`/companies/${vid}`);
    const customers = page.getByRole('region', { name: /Customers/ });
    await customers.getByRole('button', { name: 'Next' }).click();
    const second = customers.getByText(`11–${Math.min(20, count)} of ${count.toLocaleString('en-US')}`);
    await second.waitFor();
    const link = customers.getByRole('row').nth(1).getByRole('link').first();
    const name = await link.textContent();
    // The page's other parts may still be drawing (and a part that shrinks pulls the scroll up with
    // it): the place it is left at is measured once its height has held for half a second.
    await page.evaluate(`new Promise((resolve) => {
      let height = -1;
      let held = 0;
      const tick = () => {
        const now = document.documentElement.scrollHeight;
        if (now === height) held++;
        else [height, held] = [now, 0];
        if (held >= 5) resolve(undefined);
        else setTimeout(tick, 100);
      };
      tick();
    })`);
    await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight)');
    const left = await page.evaluate<number>('window.scrollY');
    expect(left).toBeGreaterThan(200);
    // Clicked where it is: a click that first scrolled the link into view would move the place left at.
    await link.dispatchEvent('click', { button: 0 });
    await page.waitForURL((url) => !url.pathname.endsWith(vid));
    await page.getByRole('heading', { level: 1, name: name! }).waitFor();
    await page.goBack();
    await second.waitFor();
    await waitInPage(page, `window.scrollY === ${left}`);
    await page.reload();
    await second.waitFor();
    await waitInPage(page, `window.scrollY === ${left}`);
  });

  it('shows as many rows a page as asked for, and keeps that through a reload', async () => {
    const { vid, count_customers: count } = await bigSupplier();
    await open(`/companies/${vid}`);
    const customers = page.getByRole('region', { name: /Customers/ });
    await customers.getByRole('button', { name: 'Next' }).waitFor();
    await customers.getByLabel('Per page').selectOption('25');
    const shown = Math.min(25, count);
    const pager = customers.getByText(`1–${shown} of ${count.toLocaleString('en-US')}`);
    await pager.waitFor();
    expect(await customers.getByRole('row').count()).toBe(shown + 1);
    await page.reload();
    await pager.waitFor();
    expect(await customers.getByLabel('Per page').inputValue()).toBe('25');
  });

  it('says the list is filtered, and of how many in all, once filters are applied', async () => {
    const { vid, count_customers: count } = await bigSupplier();
    await open(`/companies/${vid}`);
    const customers = page.getByRole('region', { name: /Customers/ });
    await customers.getByRole('button', { name: 'Next' }).waitFor();
    const note = customers.getByText(/^Only those with /);
    expect(await note.count()).toBe(0);
    await customers.getByLabel('Min. confidence (%)').fill('50');
    await customers.getByLabel('Evidence after').fill('2020-01-01');
    await customers.getByRole('button', { name: 'Filter' }).click();
    expect(await note.textContent()).toBe(
      `Only those with confidence at least 50% and evidence after 2020-01-01, of ${count.toLocaleString('en-US')} in all.`,
    );
    // Back to no filter: the line goes.
    await customers.getByLabel('Min. confidence').fill('0');
    await customers.getByLabel('Evidence after').fill('');
    await customers.getByRole('button', { name: 'Filter' }).click();
    await note.waitFor({ state: 'hidden' });
  });

  it('shows the evidence asked for last when an earlier answer comes late', async () => {
    await open(`/companies/${hub.vid}`);
    const suppliers = page.getByRole('region', { name: /Suppliers/ });
    await suppliers.getByRole('row').nth(2).waitFor();
    let edges = 0;
    await page.route('**/graphql', async (route) => {
      if (operationOf(route) === 'Edge' && edges++ === 0) await new Promise((r) => setTimeout(r, 1500));
      await route.continue();
    });
    const buttons = suppliers.getByRole('button', { name: /^Evidence: / });
    await buttons.nth(0).click();
    await buttons.nth(1).click();
    const second = (await buttons.nth(1).getAttribute('aria-label'))!.replace(
      /^Evidence: (.*) supplies (.*)$/,
      '$1 → $2',
    );
    const evidence = page.getByRole('region', { name: 'Evidence' });
    await evidence.getByRole('heading', { name: `Evidence: ${second}` }).waitFor();
    await page.waitForTimeout(2000);
    expect(await evidence.getByRole('heading').first().textContent()).toBe(`Evidence: ${second}`);
  });

  it('suggests only companies of the country given beside the name', async () => {
    await open('/');
    await page.getByLabel('Country').fill('Germany');
    const suggestRoute: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/v1/companies/suggest/')) suggestRoute.push(r.url());
    });
    await page
      .getByRole('searchbox', { name: 'Search companies' })
      .pressSequentially('Precision', { delay: 20 });
    const shown = page.locator('#suggestions:not([hidden]) li');
    await shown.first().waitFor();
    // Five companies are named Precision, one of them German.
    expect(await shown.allTextContents()).toEqual(['Bianchi Precision Components · Germany']);
    expect(suggestRoute).toEqual([]);
    // The whole row leads to the company, the country as well as the name.
    await shown.first().getByText(' · Germany').click();
    await page.getByRole('heading', { level: 1, name: 'Bianchi Precision Components' }).waitFor();
    // A country typed after the name puts away the suggestions made without it.
    await open('/');
    const box = page.getByRole('searchbox', { name: 'Search companies' });
    await box.pressSequentially('Precision', { delay: 20 });
    await shown.nth(1).waitFor();
    await page.getByLabel('Country').fill('Germany');
    await page.locator('#suggestions[hidden]').waitFor({ state: 'attached' });
  });

  it('shows a company\'s other names, says "not found" for an address the app has none for, and reads hand-edited searches kindly', async () => {
    await open('/companies/cdhgat1');
    const profile = page.getByRole('region', { name: 'Profile' });
    await profile
      .locator('dt:text-is("Also known as") + dd')
      .filter({ hasText: 'Omnicore Apparel' })
      .waitFor();
    for (const path of [
      '/nonexistent/path',
      `/companies/${hub.vid}/foo`,
      `/companies/${hub.vid}/map/extra`,
      '/companies/%E0%A4%A',
    ]) {
      await page.goto(`${base}${path}`);
      await page.getByRole('heading', { name: 'Not found' }).waitFor();
      expect([path, await page.title()]).toEqual([path, 'Not found · tiergraph']);
    }
    // A name of spaces is no name: the page invites a search instead of showing the server's refusal.
    await page.goto(`${base}/?q=%20%20`);
    await page.getByText('Type a name to see suggestions').waitFor();
    // Past the last page: no more results, not "no company matches".
    await page.goto(`${base}/?q=Precision&offset=9990`);
    await page.getByRole('region', { name: 'Results' }).getByText('No more results.').waitFor();
    // Without a name, the order is not a name's relevance.
    await page.goto(`${base}/?country=Germany`);
    await page.getByText('Companies of this country, the most connected first.').waitFor();
  });

  it('says what a search found in a status line rather than reading the table out, and names a country that matched nothing', async () => {
    await open('/?country=China');
    const results = page.getByRole('region', { name: 'Results' });
    await results.getByRole('row').nth(1).waitFor();
    expect(await results.getAttribute('aria-live')).toBeNull();
    const rows = (await results.getByRole('row').count()) - 1;
    const said = await page
      .getByRole('status')
      .filter({ hasText: /^Results / })
      .textContent();
    expect(said).toMatch(new RegExp(`^Results 1 to ${rows}(\\.|, more on the next page\\.)$`));
    // "Korea" is no name ISO 3166 or the server knows the country by.
    await page.goto(`${base}/?q=${encodeURIComponent('Precision')}&country=Korea`);
    await results.getByText('No company matches in “Korea”.', { exact: false }).waitFor();
    expect(await results.textContent()).toMatch(/“Korea, Republic of” or “South Korea”/);
    expect(
      await page
        .getByRole('status')
        .filter({ hasText: /^No company/ })
        .textContent(),
    ).toBe('No company matches.');
  });

  it('asks for a key, not the server, when only spaces were typed', async () => {
    let asked = 0;
    page.on('request', (r) => {
      if (r.url().endsWith('/graphql')) asked++;
    });
    for (const path of ['/', '/explorer']) {
      await page.goto(`${base}${path}`);
      await page.getByLabel('API key').fill(' '.repeat(20));
      await page.getByRole('button', { name: 'Save key' }).click();
      await page.getByRole('alert').filter({ hasText: 'Enter your API key' }).waitFor();
    }
    expect(asked).toBe(0);
  });
});
