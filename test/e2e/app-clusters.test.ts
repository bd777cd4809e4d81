import type { Browser, BrowserContext, Page } from 'playwright-core';
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
 * A company's lists for its whole cluster: the small test graph, whose cluster K1 (Acme Aerospace
 * Holdings and two subsidiaries) has relationships its members do not have alone.
 */
describeWithBrowser('the web app: lists of a whole cluster', () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base = '';

  beforeAll(async () => {
    requireBrowser();
    buildWebApp();
    server = await startTestServer();
    base = `http://localhost:${server.running.port}`;
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addInitScript(`localStorage.setItem('tiergraph.apiKey', ${JSON.stringify(TEST_KEY)})`);
    await reportPolicyViolations(context, violations);
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
  });

  /** What the app's policy refused in the step's pages: nothing. */
  const violations: string[] = [];
  afterEach(() => {
    expect(violations.splice(0)).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** The counterparts' names in the list of `side`, as the API gives them at `path`. */
  const apiNames = async (path: string, side: 'supplier' | 'customer') =>
    ((await (await server.get(path)).json()) as { results: Record<string, { name: string }>[] }).results.map(
      (r) => r[side]!.name,
    );

  /** Waits until the list of `side` shows `names`, in that order (evaluated in the page). */
  const listing = (side: 'suppliers' | 'customers', names: string[]) =>
    waitInPage(
      page,
      `JSON.stringify([...document.querySelectorAll('[aria-labelledby="${side}-h"] tbody tr td:first-child a')]
        .map((a) => a.textContent)) === ${JSON.stringify(JSON.stringify(names))}`,
    );

  it("switches a parent's lists to its cluster's, grouped by cluster, and keeps the choice", async () => {
    const own = await apiNames('/v1/companies/acme-hold/suppliers/', 'supplier');
    const clustered = await apiNames('/v1/companies/acme-hold/cluster_suppliers/', 'supplier');
    expect(clustered.length).toBeGreaterThan(0);
    expect(clustered).not.toEqual(own);
    await page.goto(`${base}/companies/acme-hold`);
    const suppliers = page.getByRole('region', { name: /Suppliers/ });
    await listing('suppliers', own);
    const heading = suppliers.getByRole('heading', { level: 2 });
    expect(await heading.innerText()).toBe(`Suppliers ${own.length}`);
    await suppliers.getByLabel('Whole cluster').check();
    await listing('suppliers', clustered);
    // The heading no longer gives the company's own count above the cluster's list.
    expect(await heading.innerText()).toBe('Suppliers of the whole cluster');
    await suppliers
      .getByText("The suppliers of every company of Acme Aerospace Holdings's cluster")
      .waitFor();
    // Both sides of a row are clusters, each named by its parent.
    expect(
      await suppliers
        .getByRole('button', {
          name: `Evidence: ${clustered[0]}'s cluster supplies Acme Aerospace Holdings's cluster`,
        })
        .count(),
    ).toBe(1);
    // The pager does not claim the company's own count.
    expect(await suppliers.getByRole('navigation').textContent()).not.toContain(' of ');
    // The evidence of a relationship between clusters names the two companies each edge joins.
    const edges = (
      (await (await server.get('/v1/companies/acme-hold/cluster_suppliers/')).json()) as {
        results: { relationship: { edge_ids: string[] } }[];
      }
    ).results[0]!.relationship.edge_ids;
    await suppliers
      .getByRole('button', {
        name: `Evidence: ${clustered[0]}'s cluster supplies Acme Aerospace Holdings's cluster`,
      })
      .click();
    const evidence = page.getByRole('region', { name: 'Evidence' });
    for (const id of edges) {
      const edge = (await (await server.get(`/v1/edges/${id}/`)).json()) as {
        supplier_id: string;
        customer_id: string;
      };
      const name = async (vid: string) =>
        ((await (await server.get(`/v1/companies/${vid}/`)).json()) as { name: string }).name;
      await evidence
        .getByText(`${await name(edge.supplier_id)} → ${await name(edge.customer_id)} · Edge ${id}`)
        .waitFor();
    }
    await evidence.getByRole('button', { name: 'Close' }).click();

    // Kept in the page's history entry, as the page and the filters are: a reload comes back to it,
    // while the other list keeps its own scope.
    await page.reload();
    const again = page.getByRole('region', { name: /Suppliers/ });
    await listing('suppliers', clustered);
    expect(await again.getByLabel('Whole cluster').isChecked()).toBe(true);
    const customers = page.getByRole('region', { name: /Customers/ });
    expect(await customers.getByLabel('Whole cluster').isChecked()).toBe(false);
    await again.getByLabel('Whole cluster').uncheck();
    await listing('suppliers', own);
    expect(await again.getByRole('heading', { level: 2 }).innerText()).toBe(`Suppliers ${own.length}`);
  });

  it('says a list is empty because none are recorded, not because of filters that are not there', async () => {
    expect(await apiNames('/v1/companies/acme-hold/customers/', 'customer')).toEqual([]);
    const clustered = await apiNames('/v1/companies/acme-hold/cluster_customers/', 'customer');
    expect(clustered.length).toBeGreaterThan(0);
    await page.goto(`${base}/companies/acme-hold`);
    const customers = page.getByRole('region', { name: /Customers/ });
    await customers.getByText('No customers recorded.').waitFor();
    await customers.getByLabel('Whole cluster').check();
    await listing('customers', clustered);
    // With a filter that keeps none, the filter is named as the reason.
    await customers.getByLabel('Min. confidence (%)').fill('100');
    await customers.getByRole('button', { name: 'Filter' }).click();
    await customers.getByText('No customers match these filters.').waitFor();
    await customers.getByLabel('Whole cluster').uncheck();
    await customers.getByText('No customers match these filters.').waitFor();
    await customers.getByLabel('Min. confidence (%)').fill('0');
    await customers.getByRole('button', { name: 'Filter' }).click();
    await customers.getByText('No customers recorded.').waitFor();
  });

  it('offers no cluster list for a company in no cluster', async () => {
    await page.goto(`${base}/companies/bolt`);
    await page.getByRole('heading', { level: 1, name: 'Bolt Castings Ltd' }).waitFor();
    await page
      .getByRole('region', { name: /Customers/ })
      .getByRole('row')
      .nth(1)
      .waitFor();
    expect(await page.getByLabel('Whole cluster').count()).toBe(0);
    // Its cluster is itself: said once, without a list of one member.
    await page.getByText('This company is not part of a larger cluster.').waitFor();
    expect(await page.getByRole('list', { name: 'Cluster members' }).count()).toBe(0);
  });

  it("lists a subsidiary's cluster members, itself among them, under its parent's name", async () => {
    await page.goto(`${base}/companies/acme-gmbh`);
    const members = page.getByRole('list', { name: 'Cluster members' });
    await members.getByRole('listitem').nth(2).waitFor();
    expect(await members.getByRole('listitem').count()).toBe(3);
    expect(
      await page.getByRole('link', { name: 'Acme Aerospace Holdings', exact: true }).count(),
    ).toBeGreaterThan(0);
  });
});
