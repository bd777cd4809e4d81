// The analyst app's figures: the JavaScript it ships (gzipped) and the time from
// opening a company to a drawn 2-tier supplier map of the store's biggest hub, in
// Debian's chromium. Against a running server:
//   node bench/webapp.mjs --base http://127.0.0.1:4000 --key <API key> [--runs 5] [--vid <company>]
// Without --vid, the company with the most relationships. The map opens on the side the
// company page's link picks (suppliers, or customers for a company without suppliers).
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { chromium } from 'playwright-core';
import { ROOT, median, parseArgs } from './common.mjs';

const args = parseArgs();
const base = args.base ?? 'http://127.0.0.1:4000';
const key = args.key;
const runs = Number(args.runs ?? 5);
if (!key) throw new Error('--key <API key> is required');

// Per page, the scripts its HTML loads: the app's pages never load the explorer's bundle, and the reverse.
const web = path.join(ROOT, 'dist', 'web');
for (const [page, html] of [
  ['app (search, company, tier map)', 'index.html'],
  ['GraphQL explorer', 'explorer.html'],
]) {
  const scripts = [
    ...fs.readFileSync(path.join(web, html), 'utf8').matchAll(/src="\/assets\/([^"]+\.js)"/g),
  ].map((m) => m[1]);
  const gz = scripts.reduce(
    (sum, f) => sum + zlib.gzipSync(fs.readFileSync(path.join(web, 'assets', f)), { level: 9 }).length,
    0,
  );
  console.log(`${page} JavaScript: ${scripts.length} file(s), ${(gz / 1024).toFixed(1)} kB gzipped`);
}

const hub = args.vid
  ? await (
      await fetch(`${base}/v1/companies/${encodeURIComponent(args.vid)}/`, {
        headers: { 'X-SERVICE-KEY': key },
      })
    ).json()
  : (await (await fetch(`${base}/v1/companies/?limit=1`, { headers: { 'X-SERVICE-KEY': key } })).json())
      .results[0];
console.log(
  `biggest hub: ${hub.name} (${hub.vid}), ${hub.count_suppliers} suppliers, ${hub.count_customers} customers`,
);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ],
});
const times = [];
let nodes = 0;
try {
  for (let i = 0; i < runs; i++) {
    // A fresh context each run: nothing cached in the browser; the server's read cache is warm after the first.
    const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
    await context.addInitScript((k) => localStorage.setItem('tiergraph.apiKey', k), key);
    const page = await context.newPage();
    await page.goto(`${base}/companies/${hub.vid}`);
    await page.getByRole('link', { name: 'Tier map' }).waitFor();
    const started = Date.now();
    await page.getByRole('link', { name: 'Tier map' }).click();
    await page.locator('[role=figure][data-nodes]').waitFor({ timeout: 60_000 });
    times.push(Date.now() - started);
    nodes = Number(await page.locator('[role=figure]').getAttribute('data-nodes'));
    await context.close();
  }
} finally {
  await browser.close();
}
console.log(
  `click "Tier map" to drawn 2-tier map: ${nodes} nodes, median ${median(times)} ms of ${runs} (first ${times[0]} ms; ${times.join(', ')})`,
);
