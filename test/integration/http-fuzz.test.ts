import { startTestServer, TEST_KEY } from '../support/server';
import type { TestServer } from '../support/server';

/**
 * Odd requests over every route and method of the OpenAPI document: bounded
 * (CASES requests), seeded (the same requests on every run; FUZZ_SEED and
 * FUZZ_CASES explore others), and checked for what must hold whatever the
 * input: no 5xx, and every error a problem document. FUZZ_DEBUG=1 prints
 * each request's status, to see what a seed reaches.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const CASES = Number(process.env.FUZZ_CASES ?? 1500);

/** mulberry32: small, fast and deterministic; quality is beside the point here. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Operation {
  path: string;
  method: string;
  parameters: { name: string; in: string }[];
  hasBody: boolean;
}

interface Case {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

const NUMBERS = [
  '0',
  '1',
  '-1',
  '100',
  '101',
  '9000',
  '10000',
  '10001',
  '2147483647',
  '2147483648',
  '-2147483649',
  '999999999999999',
  '9999999999999999999999',
  '1e309',
  '-0',
  '1.5',
  '0x10',
  ' 1',
  'NaN',
  'Infinity',
  '1e-400',
  '.',
  '-',
];
const STRINGS = [
  '',
  ' ',
  'boeing',
  'e1',
  '1',
  'ü',
  '🙂🙂',
  'Ω≈ç√',
  '\u202e',
  '%00',
  '%2F',
  '%E0%A4%A',
  '%',
  '..',
  '../../etc/passwd',
  "' OR 1=1 --",
  '<script>',
  '{"a":1}',
  'null',
  'true',
  'x'.repeat(300),
  'x'.repeat(5000),
];

function pick<T>(rnd: () => number, items: readonly T[]): T {
  return items[Math.floor(rnd() * items.length)]!;
}

function value(rnd: () => number): string {
  return rnd() < 0.5 ? pick(rnd, NUMBERS) : pick(rnd, STRINGS);
}

/** Query-string and path text: percent-encoded, except for the raw escapes kept on purpose. */
function encode(rnd: () => number, v: string): string {
  return v.startsWith('%') && rnd() < 0.7 ? v : encodeURIComponent(v);
}

function deepJson(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

/** A value each documented parameter accepts, so that a case can change one thing of a valid request. */
const VALID: Record<string, string> = {
  vid: 'boeing',
  edge_id: 'e1',
  limit: '5',
  offset: '1',
  confidence_score: '0.5',
  date: '2020-01-01',
  name: 'boe',
  include_subsidiaries: 'true',
  min_similarity: '0.3',
  city: 'seattle',
  country: 'united states',
  website: 'boeing.example',
  identifier: 'Q66',
};

const VALID_BODY = { root_nodes: 'boeing', num_tiers: '1', direction: 'supplier' };

function oddJson(rnd: () => number): unknown {
  return pick(rnd, [
    value(rnd),
    Number(pick(rnd, NUMBERS)),
    null,
    true,
    [],
    {},
    [value(rnd)],
    { nested: value(rnd) },
    2 ** 53 + 1,
    -1,
    1.5,
    'x'.repeat(70_000),
  ]);
}

/** A body with one thing wrong, or none. */
function body(rnd: () => number): { text?: string; type?: string } {
  const json = (v: unknown) => ({ text: JSON.stringify(v), type: 'application/json' });
  const field = pick(rnd, [
    ...Object.keys(VALID_BODY),
    'min_evid_date',
    'output_multiple_tables',
    'callback_url',
  ]);
  switch (Math.floor(rnd() * 10)) {
    case 0:
      return json(VALID_BODY);
    case 1:
    case 2:
      return json({ ...VALID_BODY, [field]: oddJson(rnd) });
    case 3: {
      const { [field as keyof typeof VALID_BODY]: _dropped, ...rest } = VALID_BODY;
      return json(rest);
    }
    case 4:
      return json({
        ...VALID_BODY,
        [pick(rnd, ['extra', '__proto__', 'constructor', '', 'ü'])]: oddJson(rnd),
      });
    case 5:
      return json(oddJson(rnd));
    case 6:
      return { text: deepJson(pick(rnd, [100, 5000, 20000])), type: 'application/json' };
    case 7:
      return {
        text: pick(rnd, ['{', '{"a":', 'nul', '\u0000', '[1,]', '"\\ud800"', '']),
        type: 'application/json',
      };
    case 8:
      return {
        text: 'root_nodes=boeing&num_tiers=1&direction=supplier',
        type: pick(rnd, [
          'application/x-www-form-urlencoded',
          'text/plain',
          'application/json; charset=latin1',
        ]),
      };
    default:
      return {};
  }
}

/**
 * A valid request for one documented operation, then one or two changes:
 * an odd path or query value, an unknown or repeated parameter, a wrong body,
 * method or key. Each change meets the checks after the ones a fully random
 * request would fail first.
 */
function buildCase(rnd: () => number, ops: Operation[], base: string, runId: string): Case {
  const op = pick(rnd, ops);
  const valid: Record<string, string> = { ...VALID, run_id: runId };
  const pathValues: Record<string, string> = {};
  const query: [string, string][] = [];
  let method = op.method;
  const headers: Record<string, string> = { 'X-SERVICE-KEY': TEST_KEY };
  let requestBody: { text?: string; type?: string } = op.hasBody ? body(rnd) : {};
  const pathParams = op.parameters.filter((x) => x.in === 'path').map((x) => x.name);
  const queryParams = op.parameters.filter((x) => x.in === 'query').map((x) => x.name);
  for (const name of pathParams) pathValues[name] = valid[name] ?? '1';
  for (const name of queryParams) if (rnd() < 0.3) query.push([name, valid[name] ?? '1']);

  const changes = 1 + Math.floor(rnd() * 2);
  for (let k = 0; k < changes; k++) {
    const roll = rnd();
    if (roll < 0.2 && pathParams.length > 0) {
      pathValues[pick(rnd, pathParams)] = value(rnd);
    } else if (roll < 0.5 && queryParams.length > 0) {
      query.push([pick(rnd, queryParams), value(rnd)]);
    } else if (roll < 0.6) {
      query.push([pick(rnd, ['unknown', '', 'a[b]', '__proto__', 'LIMIT']), value(rnd)]);
    } else if (roll < 0.68 && query.length > 0) {
      query.push(pick(rnd, query));
    } else if (roll < 0.78) {
      method = pick(
        rnd,
        ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => m !== op.method),
      );
      if (method !== 'GET' && rnd() < 0.5) requestBody = body(rnd);
    } else if (roll < 0.84) {
      const key = pick(rnd, [null, 'wrong-key-wrong-key', ' ', TEST_KEY.toUpperCase()]);
      if (key === null) delete headers['X-SERVICE-KEY'];
      else headers['X-SERVICE-KEY'] = key;
    } else if (op.hasBody) {
      requestBody = body(rnd);
    } else if (queryParams.length > 0) {
      query.push([pick(rnd, queryParams), '']);
    }
  }

  let path = op.path;
  for (const [name, v] of Object.entries(pathValues)) path = path.replace(`{${name}}`, encode(rnd, v));
  if (rnd() < 0.2) path = path.replace(/\/$/, '');
  const qs = query.map(([k, v]) => `${encodeURIComponent(k)}=${encode(rnd, v)}`).join('&');
  if (method === 'GET') requestBody = {};
  if (requestBody.type) headers['content-type'] = requestBody.type;
  return {
    method,
    url: `${base}${path}${qs ? `?${qs}` : ''}`,
    headers,
    ...(requestBody.text !== undefined ? { body: requestBody.text } : {}),
  };
}

let t: TestServer;
let ops: Operation[];
let runId: string;
beforeAll(async () => {
  // Limits out of the way of the requests, so that each reaches the route it names.
  t = await startTestServer({ RATE_LIMIT_MAX: '10000000', AUTH_FAILURE_MAX: '1000000', MAX_TIERS: '2' });
  const doc = (await (await fetch(`${t.base}/openapi.json`)).json()) as {
    paths: Record<
      string,
      Record<string, { parameters?: { name: string; in: string }[]; requestBody?: unknown }>
    >;
  };
  const started = await t.post('/v1/tierviewjob/', VALID_BODY);
  runId = String(((await started.json()) as { run_id: number }).run_id);
  ops = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      path,
      method: method.toUpperCase(),
      parameters: op.parameters ?? [],
      hasBody: op.requestBody !== undefined,
    })),
  );
});
afterAll(async () => {
  await t.stop();
});

it(`answers ${CASES} odd requests (seed ${SEED}) over every documented route without a 5xx, errors as problem+json`, async () => {
  expect(ops.length).toBeGreaterThanOrEqual(8);
  const rnd = prng(SEED);
  const failures: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < CASES; i++) {
    const c = buildCase(rnd, ops, t.base, runId);
    let status: number;
    let type: string;
    try {
      const res = await fetch(c.url, { method: c.method, headers: c.headers, body: c.body });
      status = res.status;
      type = res.headers.get('content-type') ?? '';
      await res.arrayBuffer();
    } catch (e) {
      failures.push(`#${i} ${c.method} ${c.url.slice(0, 200)}: no answer (${String(e)})`);
      continue;
    }
    seen.add(`${c.method} ${status}`);
    if (process.env.FUZZ_DEBUG) console.log(status, c.method, c.url.slice(0, 150));
    const bad = status >= 500 || (status >= 400 && !type.startsWith('application/problem+json'));
    if (bad) {
      failures.push(
        `#${i} ${c.method} ${c.url.slice(0, 200)} ${JSON.stringify(c.headers)} body ${c.body?.slice(0, 80) ?? '-'}: ${status} ${type}`,
      );
    }
  }
  expect(failures).toEqual([]);
  // The requests reached past authentication and validation too, not only the error paths.
  expect([...seen].some((s) => s.endsWith(' 200'))).toBe(true);
  expect([...seen].some((s) => s.endsWith(' 400'))).toBe(true);
  expect([...seen].some((s) => s.endsWith(' 405'))).toBe(true);
});
