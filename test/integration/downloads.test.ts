import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { startTestServer } from '../support/server';
import type { TestServer } from '../support/server';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({}, null);
  await t.running.blobs.put('runs/7/tierview.csv', Readable.from(['a,b\n', '1,2\n']), 'text/csv');
});
afterAll(async () => {
  await t.stop();
});

const local = (url: string) => {
  const u = new URL(url);
  return `${t.base}${u.pathname}${u.search}`;
};

describe('signed download links', () => {
  it('download the file without an API key until they expire', async () => {
    const url = await t.running.blobs.signedUrl('runs/7/tierview.csv', 3600);
    expect(url).toMatch(/\/downloads\/runs\/7\/tierview\.csv\?expires=\d+&signature=[0-9a-f]{64}$/);
    const res = await fetch(local(url));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('a,b\n1,2\n');
    expect(res.headers.get('content-disposition')).toMatch(/tierview\.csv/);
  });

  it('answer 403 to a tampered link and 410 to an expired one', async () => {
    const url = new URL(await t.running.blobs.signedUrl('runs/7/tierview.csv', 3600));
    const later = new URL(url);
    later.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 60));
    expect((await fetch(local(later.toString()))).status).toBe(403);
    const other = new URL(url);
    other.pathname = '/downloads/runs/8/tierview.csv';
    expect((await fetch(local(other.toString()))).status).toBe(403);
    const unsigned = new URL(url);
    unsigned.searchParams.delete('signature');
    const refused = await fetch(local(unsigned.toString()));
    expect(refused.status).toBe(403);
    // A link takes no key: the problem speaks of the link only.
    const problem = (await refused.json()) as { title: string; detail: string };
    expect(problem.detail).toBe(
      'This download link is not valid (altered, or signed before the server changed its download secret). Ask for the run again (GET /v1/jobs/{run_id}/) for fresh links.',
    );
    expect(`${problem.title} ${problem.detail}`).not.toMatch(/key/i);

    const expired = await t.running.blobs.signedUrl('runs/7/tierview.csv', -1);
    const res = await fetch(local(expired));
    expect(res.status).toBe(410);
    // The problem names the file, not the link's signature, however the path is written.
    expect(await res.json()).toEqual(
      expect.objectContaining({ code: 'GONE', instance: '/downloads/runs/7/tierview.csv' }),
    );
    const upper = await fetch(local(expired).replace('/downloads/', '/Downloads/'));
    expect(await upper.json()).toEqual(
      expect.objectContaining({ code: 'GONE', instance: '/Downloads/runs/7/tierview.csv' }),
    );
  });

  it('answer a range past the end 416 and a failed condition 412, as problems, not as the file', async () => {
    const url = local(await t.running.blobs.signedUrl('runs/7/tierview.csv', 3600));
    const part = await fetch(url, { headers: { range: 'bytes=4-' } });
    expect([part.status, await part.text()]).toEqual([206, '1,2\n']);
    const cases: [Record<string, string>, number, string][] = [
      [{ range: 'bytes=999999-' }, 416, 'RANGE_NOT_SATISFIABLE'],
      [{ 'if-match': '"not-this-file"' }, 412, 'PRECONDITION_FAILED'],
      [{ 'if-unmodified-since': 'Mon, 01 Jan 2001 00:00:00 GMT' }, 412, 'PRECONDITION_FAILED'],
    ];
    for (const [headers, status, code] of cases) {
      const res = await fetch(url, { headers });
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      // A browser would save a problem sent with the file's attachment header as the file.
      expect(res.headers.get('content-disposition')).toBeNull();
      expect(((await res.json()) as { code: string }).code).toBe(code);
      if (status === 416) expect(res.headers.get('content-range')).toBe('bytes */8');
    }
  });

  it('refuse keys that leave the store', async () => {
    await expect(t.running.blobs.signedUrl('../api-keys.json', 60)).rejects.toThrow(/unsafe/);
    expect(
      (await fetch(`${t.base}/downloads/..%2Fapi-keys.json?expires=9999999999&signature=${'0'.repeat(64)}`))
        .status,
    ).toBe(403);
  });

  it('remove files older than a given time, and the folders they leave empty', async () => {
    await t.running.blobs.put('runs/9/old.csv', Readable.from(['x\n']), 'text/csv');
    expect(await t.running.blobs.exists('runs/9/old.csv')).toBe(true);
    // Readable by this account only, as the keys and secrets beside them are.
    const exports = path.join(t.dataDir, 'exports');
    expect(fs.statSync(path.join(exports, 'runs', '9', 'old.csv')).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(exports, 'runs', '9')).mode & 0o777).toBe(0o700);
    // So are the run records, which hold callers' callback addresses and what they exported.
    const jobs = path.join(t.dataDir, 'jobs');
    expect(fs.statSync(jobs).mode & 0o777).toBe(0o700);
    for (const f of fs.readdirSync(jobs))
      expect([f, fs.statSync(path.join(jobs, f)).mode & 0o777]).toEqual([f, 0o600]);
    // And the graph, whose evidence is the data owner's.
    expect(fs.statSync(path.join(t.dataDir, 'graph')).mode & 0o777).toBe(0o700);
    expect(await t.running.blobs.deleteOlderThan(new Date(Date.now() + 60_000))).toBe(2);
    expect(await t.running.blobs.exists('runs/9/old.csv')).toBe(false);
    // A folder is no file.
    expect(await t.running.blobs.exists('runs')).toBe(false);
    const url = await t.running.blobs.signedUrl('runs/7/tierview.csv', 3600);
    expect((await fetch(local(url))).status).toBe(410);
    // The run folders went with their files.
    expect(fs.readdirSync(path.join(t.dataDir, 'exports', 'runs'))).toEqual([]);
  });

  it('remove the folders of files past a cutoff in the past at once, not at a later sweep', async () => {
    const blobs = t.running.blobs;
    await blobs.put('runs/12/a1/tierview.csv', Readable.from(['x\n']), 'text/csv');
    await blobs.put('runs/13/a1/tierview.csv', Readable.from(['y\n']), 'text/csv');
    const runs = path.join(t.dataDir, 'exports', 'runs');
    const dayAgo = new Date(Date.now() - 86_400_000);
    fs.utimesSync(path.join(runs, '12', 'a1', 'tierview.csv'), dayAgo, dayAgo);
    expect(await blobs.deleteOlderThan(new Date(Date.now() - 3_600_000))).toBe(1);
    expect(fs.existsSync(path.join(runs, '12'))).toBe(false);
    expect(fs.existsSync(path.join(runs, '13', 'a1', 'tierview.csv'))).toBe(true);
  });

  it("remove a run's folders with its last file, and only then", async () => {
    const blobs = t.running.blobs;
    await blobs.put('runs/11/a1/tierview.csv', Readable.from(['x\n']), 'text/csv');
    await blobs.put('runs/11/a2/tierview.csv', Readable.from(['y\n']), 'text/csv');
    const runs = path.join(t.dataDir, 'exports', 'runs');
    await blobs.delete('runs/11/a1/tierview.csv');
    expect(fs.readdirSync(path.join(runs, '11'))).toEqual(['a2']);
    await blobs.delete('runs/11/a2/tierview.csv');
    expect(fs.existsSync(path.join(runs, '11'))).toBe(false);
    expect(fs.existsSync(runs)).toBe(true);
  });
});
