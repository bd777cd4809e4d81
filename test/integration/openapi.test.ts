import fs from 'node:fs';
import path from 'node:path';
import type { Express } from 'express';
import { loadConfig } from '../../src/config/env';
import { generateDataset } from '../../src/demo/generate';
import { tempDir } from '../support/paths';
import type { RouteTable } from '../../src/rest/route-table';
import { ERROR_CODES, GRAPHQL_REQUEST_CODES } from '../../src/domain/errors';
import { startTestServer } from '../support/server';
import type { TestServer } from '../support/server';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({}, null);
});
afterAll(async () => {
  await t.stop();
});

interface Layer {
  handle?: { table?: RouteTable };
}

/** Every route answered under /v1, read from the live app's dispatcher (`dispatchUnder`). */
function v1Routes(app: Express): string[] {
  const router = (app as unknown as { router: { stack: Layer[] } }).router;
  return router.stack.flatMap(
    (layer) => layer.handle?.table?.list().map((r) => `${r.method.toLowerCase()} ${r.path}`) ?? [],
  );
}

describe('OpenAPI document', () => {
  it('describes every /v1 route', async () => {
    const doc = (await (await fetch(`${t.base}/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
    };
    expect(doc.openapi).toBe('3.1.0');
    const described = new Set(
      Object.entries(doc.paths).flatMap(([p, methods]) =>
        Object.keys(methods).map(
          (m) =>
            `${m} ${p
              .replace(/^\/v1/, '')
              .replace(/\{(\w+)\}/g, ':$1')
              .replace(/\/$/, '')}`,
        ),
      ),
    );
    const app = t.running.server.listeners('request')[0] as unknown as Express;
    const routes = v1Routes(app);
    expect(routes.length).toBeGreaterThanOrEqual(6);
    for (const r of routes) expect([r, described.has(r)]).toEqual([r, true]);
  });

  it('lists every error code on the docs page, those only GraphQL answers with included', async () => {
    const html = await (await fetch(`${t.base}/docs`)).text();
    for (const code of [...Object.keys(ERROR_CODES), ...Object.keys(GRAPHQL_REQUEST_CODES)]) {
      expect(html).toContain(`id="error-${code.toLowerCase().replace(/_/g, '-')}"`);
    }
  });

  it('describes 405 with Allow, 429 with Retry-After, and 500 and 503 on every route', async () => {
    const doc = (await (await fetch(`${t.base}/openapi.json`)).json()) as {
      info: { description: string };
      paths: Record<
        string,
        Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>
      >;
      components: { responses: Record<string, { headers?: Record<string, unknown> }> };
    };
    expect(doc.components.responses.MethodNotAllowed?.headers).toHaveProperty('Allow');
    expect(doc.info.description).toMatch(/405/);
    expect(doc.info.description).toMatch(/AUTH_FAILURE_MAX/);
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        expect([path, method, Object.keys(op.responses['429']?.headers ?? {})]).toEqual([
          path,
          method,
          ['Retry-After'],
        ]);
        // Any route may meet an error of the service's own, or a store that does not answer.
        expect([path, method, '500' in op.responses, '503' in op.responses]).toEqual([
          path,
          method,
          true,
          true,
        ]);
      }
    }
  });
});

describe('OpenAPI examples', () => {
  it("start a run at a company of the default demo dataset, so that /docs' Try it out works there", async () => {
    const doc = (await (await fetch(`${t.base}/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { example?: unknown }> } }>
      >;
    };
    const example = doc.paths['/v1/tierviewjob/']!.post!.requestBody!.content['application/json']!
      .example as {
      root_nodes: string;
    };
    const dir = tempDir('openapi-demo');
    try {
      await generateDataset({ companies: loadConfig({}).DEMO_COMPANIES, seed: 1, outDir: dir });
      const relationships = fs.readFileSync(path.join(dir, 'relationships.csv'), 'utf8').split('\n');
      // A customer in the demo, with suppliers to export.
      expect(relationships.filter((l) => l.split(',')[2] === example.root_nodes).length).toBeGreaterThan(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
