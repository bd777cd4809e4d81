import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import workerThreads from 'node:worker_threads';
import type * as StageModule from '../../src/import/stage';
import type { ImportProgress, StageOptions, StageResult } from '../../src/import/stage-result';
import { MAX_RECORD_CHARS } from '../../src/import/csv';
import { generateDataset } from '../../src/demo/generate';
import { compiledDir, compiledModule } from '../support/compiled-sources';

/** What one staging run gave: its result or failure, its files, and how evidence.csv was read. */
interface Run {
  result?: StageResult;
  error?: { message: string; rejected?: unknown };
  files: Record<string, string>;
  /** Reads of evidence.csv begun (a second one follows a fallback or an exact pass). */
  reads: number;
  /** Threads started to read a part of evidence.csv. */
  halves: number;
  progress: ImportProgress[];
}

describe('evidence.csv read by two threads', () => {
  const compiled = compiledDir('evidence-split');
  const RealWorker = workerThreads.Worker;
  const started: string[] = [];
  let dir: string;
  let generated: string;
  let header: string;
  let rows: string[];
  let mod: typeof StageModule;
  let runs = 0;

  beforeAll(async () => {
    workerThreads.Worker = class extends RealWorker {
      constructor(file: string | URL, options?: workerThreads.WorkerOptions) {
        super(file, options);
        started.push(path.basename(String(file)));
      }
    };
    mod = compiledModule<typeof StageModule>(compiled, 'import/stage');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tiergraph-evidence-split-'));
    generated = path.join(dir, 'generated');
    await generateDataset({ companies: 300, seed: 5, outDir: generated });
    const lines = fs.readFileSync(path.join(generated, 'evidence.csv'), 'utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    header = lines[0] as string;
    rows = lines.slice(1);
  });
  afterAll(() => {
    workerThreads.Worker = RealWorker;
    fs.rmSync(compiled, { recursive: true, force: true });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The generated files with evidence.csv made of `lines` (header included). */
  function inputWith(lines: string[]): string {
    const input = path.join(dir, `input-${++runs}`);
    fs.mkdirSync(input);
    for (const f of fs.readdirSync(generated))
      if (f !== 'evidence.csv') fs.copyFileSync(path.join(generated, f), path.join(input, f));
    fs.writeFileSync(path.join(input, 'evidence.csv'), `${lines.join('\n')}\n`);
    return input;
  }

  /** Byte offset of the start of data row i (0-based) in the file inputWith writes. */
  function offsetOf(lines: string[], i: number): number {
    return Buffer.byteLength(lines.slice(0, i + 1).join('\n')) + 1;
  }

  async function stage(input: string, opts: StageOptions): Promise<Run> {
    const out = path.join(dir, `out-${++runs}`);
    const progress: ImportProgress[] = [];
    const halvesBefore = started.filter((f) => f === 'evidence-half.js').length;
    const run: Run = { files: {}, reads: 0, halves: 0, progress };
    try {
      run.result = await mod.stageImport(input, out, {
        evidenceWorker: true,
        ...opts,
        onProgress: (p) => progress.push(p),
      });
      for (const f of fs.readdirSync(out).sort()) run.files[f] = fs.readFileSync(path.join(out, f), 'utf8');
    } catch (e) {
      const err = e as Error & { rejected?: unknown };
      run.error = { message: err.message, rejected: err.rejected };
    }
    run.reads = progress.filter((p) => p.file === 'evidence.csv' && p.rows === 0).length;
    run.halves = started.filter((f) => f === 'evidence-half.js').length - halvesBefore;
    return run;
  }

  /** Stages `lines` on one thread and with a split at `at`; expects the same outcome of both. */
  async function both(lines: string[], at: number, maxRejected = 1000): Promise<{ one: Run; two: Run }> {
    const input = inputWith(lines);
    const one = await stage(input, { evidenceSplit: false, maxRejected });
    const two = await stage(input, { evidenceSplit: at, maxRejected });
    expect(one.halves).toBe(0);
    expect(two.halves).toBe(1);
    expect(two.error).toEqual(one.error);
    expect(two.result).toEqual(one.result);
    expect(Object.keys(two.files)).toEqual(Object.keys(one.files));
    for (const f of Object.keys(one.files)) expect([f, two.files[f]]).toEqual([f, one.files[f]]);
    return { one, two };
  }

  /** Data row i with field k replaced. */
  function withField(i: number, k: number, value: string): string {
    const f = (rows[i] as string).split(',');
    f[k] = value;
    return f.join(',');
  }

  it('stages the same files, rows and progress as one thread, reading the file once', async () => {
    const lines = [header, ...rows];
    for (const share of [1 / 3, 2 / 3]) {
      const { one, two } = await both(
        lines,
        Math.floor(offsetOf(lines, Math.floor(rows.length * share))) - 5,
      );
      expect(two.reads).toBe(1);
      expect(one.result?.items.evidence).toBe(rows.length);
      expect(one.files['Edge.tsv']?.length).toBeGreaterThan(10000);
      // The rows of both threads are counted as they come, and in full at the end.
      const last = two.progress.filter((p) => p.file === 'evidence.csv').at(-1);
      expect(last).toEqual({
        phase: 'read',
        file: 'evidence.csv',
        rows: rows.length,
        totalRowsHint: rows.length,
      });
    }
  });

  it('rejects the rows one thread rejects, at their lines in the file, from either part', async () => {
    const n = rows.length;
    const lines = [header, ...rows];
    const bad = (i: number, row: string) => (lines[i + 1] = row);
    bad(3, withField(3, 2, '2021-02-30'));
    bad(10, withField(10, 1, 'e-unknown'));
    bad(n - 40, withField(n - 40, 2, 'not a date'));
    bad(n - 30, `${rows[n - 30]},extra`);
    bad(n - 20, withField(n - 20, 8, 'a\u0001b'));
    bad(n - 10, withField(n - 10, 1, 'e-nowhere'));
    const { one, two } = await both(lines, offsetOf(lines, Math.floor(n / 2)));
    expect(two.reads).toBe(1);
    expect(one.result?.rejected.map((r) => r.line)).toEqual([5, 12, n - 38, n - 28, n - 18, n - 8]);
    expect(one.result?.items.evidence).toBe(n - 6);
  });

  it('reads the file again on one thread when an id rejected in the first part is reused in the second', async () => {
    const n = rows.length;
    const lines = [header, ...rows];
    lines[4] = withField(3, 2, '2021-02-30');
    const id = (rows[3] as string).split(',')[0] as string;
    lines[n - 5] = withField(n - 6, 0, id);
    const { one, two } = await both(lines, offsetOf(lines, Math.floor(n / 2)));
    expect(two.reads).toBe(2);
    expect(one.result?.rejected.map((r) => [r.line, r.reason])).toEqual([
      [5, 'column "date": "2021-02-30" is not a date (YYYY-MM-DD or ISO 8601 with zone)'],
      [n - 4, `duplicate evidence id "${id}" (first at line 5, which was rejected)`],
    ]);
  });

  it('reads the file again on one thread when the second part reuses an id it rejected', async () => {
    const n = rows.length;
    const lines = [header, ...rows];
    lines[n - 20] = withField(n - 21, 2, '2021-02-30');
    const id = (rows[n - 21] as string).split(',')[0] as string;
    lines[n - 5] = withField(n - 6, 0, id);
    const { one, two } = await both(lines, offsetOf(lines, Math.floor(n / 2)));
    expect(two.reads).toBe(2);
    expect(one.result?.rejected.map((r) => r.line)).toEqual([n - 19, n - 4]);
    expect(one.result?.rejected[1]?.reason).toContain(`first at line ${n - 19}`);
  });

  it('reads the file again on one thread when the split falls inside a quoted field', async () => {
    const n = rows.length;
    const m = Math.floor(n / 2);
    const lines = [header, ...rows];
    lines[m + 1] = withField(m, 8, '"notes on\ntwo lines, ""quoted"""');
    // Just before the line break inside the field: the first line break after it is the quoted one.
    const at = offsetOf(lines, m) + (lines[m + 1] as string).indexOf('\n') - 2;
    const { one, two } = await both(lines, at);
    expect(two.reads).toBe(2);
    expect(one.result?.rejected).toEqual([]);
    expect(one.files['Edge.tsv']).toContain('notes on two lines, \\"quoted\\"');
  });

  it('still finds a repeated evidence id after reading the file again on one thread', async () => {
    const n = rows.length;
    const m = Math.floor(n / 2);
    const lines = [header, ...rows];
    lines[m + 1] = withField(m, 8, '"notes on\ntwo lines"');
    const id = (rows[2] as string).split(',')[0] as string;
    lines[n - 2] = withField(n - 3, 0, id);
    const at = offsetOf(lines, m) + (lines[m + 1] as string).indexOf('\n') - 2;
    const { one, two } = await both(lines, at);
    expect(two.reads).toBe(3);
    expect(one.result?.rejected.map((r) => r.reason)).toEqual([
      `duplicate evidence id "${id}" (first at line 4)`,
    ]);
  });

  it('reads the file again when an id rejected in the first part comes back on a row the second part rejects', async () => {
    const n = rows.length;
    const lines = [header, ...rows];
    lines[4] = withField(3, 2, '2021-02-30');
    const id = (rows[3] as string).split(',')[0] as string;
    const f = (rows[n - 6] as string).split(',');
    f[0] = id;
    f[1] = 'e-unknown';
    lines[n - 5] = f.join(',');
    const { one, two } = await both(lines, offsetOf(lines, Math.floor(n / 2)));
    expect(two.reads).toBe(2);
    expect(one.result?.rejected[1]?.reason).toBe(
      `duplicate evidence id "${id}" (first at line 5, which was rejected)`,
    );
  });

  it('reads the file again on one thread when the second part holds a record longer than the limit', async () => {
    const n = rows.length;
    const lines = [header, ...rows];
    lines[n - 5] = withField(n - 6, 8, `"${'x'.repeat(MAX_RECORD_CHARS + 100)}"`);
    const { one, two } = await both(lines, offsetOf(lines, Math.floor(n / 2)));
    expect(two.reads).toBe(2);
    expect(one.result?.rejected.map((r) => r.line)).toEqual([n - 4]);
  });

  it('finds an evidence id repeated across the parts, with the exact pass', async () => {
    const n = rows.length;
    const lines = [header, ...rows];
    const id = (rows[2] as string).split(',')[0] as string;
    lines[n - 2] = withField(n - 3, 0, id);
    const { one, two } = await both(lines, offsetOf(lines, Math.floor(n / 2)));
    expect(two.reads).toBe(2);
    expect(one.result?.rejected.map((r) => r.reason)).toEqual([
      `duplicate evidence id "${id}" (first at line 4)`,
    ]);
  });

  it('stops at the same rejected row when the rows past the limit are in the second part', async () => {
    const n = rows.length;
    const lines = [header, ...rows];
    for (const i of [5, 6, n - 50, n - 40, n - 30]) lines[i + 1] = withField(i, 2, 'never');
    const { one, two } = await both(lines, offsetOf(lines, Math.floor(n / 2)), 3);
    expect(one.error?.message).toBe(
      `more than 3 rejected rows (last: evidence.csv line ${n - 38}: column "date": "never" is not a date (YYYY-MM-DD or ISO 8601 with zone))`,
    );
    expect(two.reads).toBe(1);
  });

  it('merges the evidence types of both parts, past the thirty kept as bits', async () => {
    const n = rows.length;
    const m = Math.floor(n / 2);
    // The first part names 20 types, the second 40, of which 10 the first named.
    const lines = [
      header,
      ...rows.map((_, i) => withField(i, 3, i < m ? `kind${i % 20}` : `kind${10 + (i % 40)}`)),
    ];
    const { one, two } = await both(lines, offsetOf(lines, m));
    expect(two.reads).toBe(1);
    expect(one.files['Edge.tsv']).toContain('kind49');
  });

  it('reports a quote left open in the second part as one thread does', async () => {
    const n = rows.length;
    const lines = [header, ...rows];
    lines[n - 10] = withField(n - 11, 8, '"never closed');
    const { one, two } = await both(lines, offsetOf(lines, Math.floor(n / 2)));
    expect(one.error?.message).toMatch(/^evidence\.csv: the quote opened on line \d+ is never closed/);
    expect(two.reads).toBe(2);
  });

  it('reads the file on one thread when no header comes before the split', async () => {
    const lines = [...Array<string>(500).fill(''), header, ...rows];
    const { one, two } = await both(lines, 100);
    expect(two.reads).toBe(2);
    expect(one.result?.items.evidence).toBe(rows.length);
    expect(one.result?.warnings).toEqual([]);
  });

  it('reads a small file on one thread unless told to split it', async () => {
    const input = inputWith([header, ...rows]);
    const run = await stage(input, {});
    expect(run.halves).toBe(0);
    expect(run.reads).toBe(1);
    expect(run.result?.items.evidence).toBe(rows.length);
  });
});
