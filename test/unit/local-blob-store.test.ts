import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { promisify } from 'node:util';
import { LocalBlobStore } from '../../src/blobs/local/local.blob-store';
import { tempDir } from '../support/paths';

const pbkdf2 = promisify(crypto.pbkdf2);

const bytes = (n: number) => Readable.from([Buffer.alloc(n, 120)]);

describe('LocalBlobStore disk budget', () => {
  let dir: string;
  let blobs: LocalBlobStore;
  beforeEach(() => {
    dir = tempDir('local-budget');
    blobs = new LocalBlobStore(
      dir,
      () => 'http://localhost',
      'a-download-secret-of-32-characters!',
    ).limitBytes(100);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("refuses a write past the budget, keeping what is in use (every key's files) for the log", async () => {
    await blobs.put('runs/1/1/a.csv', bytes(80), 'text/csv');
    const refused = blobs.put('runs/2/1/a.csv', bytes(80), 'text/csv');
    await expect(refused).rejects.toThrow(
      /^The export was stopped: its files would pass the disk budget for exports \(EXPORT_MAX_BYTES, 100 bytes for the files of every API key together\)\. /,
    );
    await expect(refused).rejects.toMatchObject({ maxBytes: 100, usedBytes: 80 });
    await expect(refused).rejects.not.toThrow(/80/);
    expect(fs.existsSync(path.join(blobs.root, 'runs', '2', '1', 'a.csv.partial'))).toBe(false);
  });

  it('does not hold files removed by hand against a new export', async () => {
    await blobs.put('runs/1/1/a.csv', bytes(80), 'text/csv');
    fs.rmSync(path.join(blobs.root, 'runs', '1'), { recursive: true });
    await expect(blobs.put('runs/2/1/a.csv', bytes(80), 'text/csv')).resolves.toEqual({
      key: 'runs/2/1/a.csv',
      bytes: 80,
    });
  });

  it('takes its count from each clean-up, which sees every file', async () => {
    await blobs.put('runs/1/1/a.csv', bytes(60), 'text/csv');
    // Another process (or a hand) put a file beside: the clean-up counts it.
    fs.writeFileSync(path.join(blobs.root, 'runs', '1', '1', 'b.csv'), Buffer.alloc(30));
    expect(await blobs.deleteOlderThan(new Date(0))).toBe(0);
    await expect(blobs.put('runs/2/1/a.csv', bytes(20), 'text/csv')).rejects.toMatchObject({ usedBytes: 90 });
  });

  it('ends a write on a full disk with a message that says so, and leaves no part of the file', async () => {
    const full = new Readable({
      read() {
        this.destroy(Object.assign(new Error('no space left on device, write'), { code: 'ENOSPC' }));
      },
    });
    await expect(blobs.put('runs/3/1/a.csv', full, 'text/csv')).rejects.toThrow(
      /^The export was stopped: the disk that holds export files is full \(ENOSPC\)/,
    );
    expect(fs.readdirSync(path.join(blobs.root, 'runs', '3', '1'))).toEqual([]);
  });
});

describe("LocalBlobStore key's share", () => {
  let dir: string;
  const open = () =>
    new LocalBlobStore(dir, () => 'http://localhost', 'a-download-secret-of-32-characters!').limitBytes(
      1000,
      300,
    );
  beforeEach(() => (dir = tempDir('local-share')));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('leaves no part of a refused file behind, even when it is refused before its file is open', async () => {
    const blobs = open();
    await blobs.put('runs/1/1/a.csv', bytes(200), 'text/csv', 'key-a');
    // Node's thread pool kept busy, so that the partial file's open waits behind this work and the
    // refusal (on the first bytes) comes first.
    const busy = Array.from({ length: 8 }, () => pbkdf2('x', 'y', 100_000, 32, 'sha256'));
    await expect(blobs.put('runs/2/1/a.csv', bytes(200), 'text/csv', 'key-a')).rejects.toThrow(
      /disk share of one API key/,
    );
    await Promise.all(busy);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fs.readdirSync(path.join(blobs.root, 'runs', '2', '1'))).toEqual([]);
  });

  it("stops a key at its share while the others still write, saying what the key's files take", async () => {
    const blobs = open();
    await blobs.put('runs/1/1/a.csv', bytes(200), 'text/csv', 'key-a');
    await expect(blobs.put('runs/2/1/a.csv', bytes(200), 'text/csv', 'key-a')).rejects.toThrow(
      /^The export was stopped: its files would pass the disk share of one API key for exports \(EXPORT_MAX_BYTES_PER_KEY, 300 bytes; this key's export files take 200\)/,
    );
    expect(fs.readdirSync(path.join(blobs.root, 'runs', '2', '1'))).toEqual([]);
    await expect(blobs.put('runs/3/1/a.csv', bytes(250), 'text/csv', 'key-b')).resolves.toMatchObject({
      bytes: 250,
    });
    // Files of no key (written before shares were counted) count in the budget only.
    await expect(blobs.put('runs/4/1/a.csv', bytes(400), 'text/csv')).resolves.toMatchObject({ bytes: 400 });
    // A's file gone, A has room again.
    await blobs.delete('runs/1/1/a.csv');
    expect(fs.existsSync(path.join(blobs.root, 'runs', '1'))).toBe(false);
    await expect(blobs.put('runs/5/1/a.csv', bytes(280), 'text/csv', 'key-a')).resolves.toMatchObject({
      bytes: 280,
    });
  });

  it('counts what a key stored before a restart, and what its writes in flight take', async () => {
    await open().put('runs/1/1/a.csv', bytes(200), 'text/csv', 'key-a');
    // A half-written file a stopped process left for the key counts too.
    fs.mkdirSync(path.join(dir, 'exports', 'runs', '2', '1'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'exports', 'runs', '2', '1', 'a.csv.partial'), Buffer.alloc(60));
    fs.writeFileSync(path.join(dir, 'exports', 'runs', '2', '1', 'a.csv.owner'), 'key-a');
    const blobs = open();
    await expect(blobs.put('runs/3/1/a.csv', bytes(50), 'text/csv', 'key-a')).rejects.toThrow(/take 260\)/);
    // Two files written at once for one key: the second sees what the first has written so far.
    const slow = new PassThrough();
    const first = blobs.put('runs/4/1/a.csv', slow, 'text/csv', 'key-b');
    slow.write(Buffer.alloc(200));
    await new Promise((r) => setTimeout(r, 50));
    await expect(blobs.put('runs/4/1/b.csv', bytes(150), 'text/csv', 'key-b')).rejects.toThrow(/take 200\)/);
    slow.end();
    await expect(first).resolves.toMatchObject({ bytes: 200 });
  });

  it("counts the key's other files being written at once as they grow, not as they were when this one began", async () => {
    const blobs = open();
    // A three-table run writes its files at once: together they may not pass the share.
    const [a, b] = [new PassThrough(), new PassThrough()];
    const puts = [
      blobs.put('runs/1/1/a.csv', a, 'text/csv', 'key-a'),
      blobs.put('runs/1/1/b.csv', b, 'text/csv', 'key-a'),
    ];
    for (const p of puts) p.catch(() => undefined);
    a.write(Buffer.alloc(200));
    b.write(Buffer.alloc(200));
    await new Promise((r) => setTimeout(r, 50));
    a.end();
    b.end();
    const settled = await Promise.allSettled(puts);
    expect(settled.map((s) => s.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(String((settled.find((s) => s.status === 'rejected') as PromiseRejectedResult).reason)).toMatch(
      /EXPORT_MAX_BYTES_PER_KEY, 300 bytes; this key's export files take 200\)/,
    );
  });

  it('ends a write whose key cannot be named on a full disk with the message of a full disk', async () => {
    const blobs = open();
    const writeFileSync = fs.writeFileSync;
    const spy = jest.spyOn(fs, 'writeFileSync').mockImplementation((file, ...rest) => {
      if (String(file).endsWith('.owner'))
        throw Object.assign(new Error('no space left on device, write'), { code: 'ENOSPC' });
      writeFileSync(file, ...rest);
    });
    try {
      await expect(blobs.put('runs/1/1/a.csv', bytes(10), 'text/csv', 'key-a')).rejects.toThrow(
        /^The export was stopped: the disk that holds export files is full \(ENOSPC\)/,
      );
    } finally {
      spy.mockRestore();
    }
    expect(fs.readdirSync(path.join(blobs.root, 'runs', '1', '1'))).toEqual([]);
  });

  it('keeps the key of a write that has just begun through a clean-up, and removes one left alone once old', async () => {
    const blobs = open();
    const body = new PassThrough();
    // The clean-up runs before the write has opened its .partial.
    const put = blobs.put('runs/1/1/a.csv', body, 'text/csv', 'key-a');
    await blobs.deleteOlderThan(new Date(Date.now() - 3600_000));
    body.end(Buffer.alloc(200));
    await put;
    const folder = path.join(blobs.root, 'runs', '1', '1');
    expect(fs.readdirSync(folder).sort()).toEqual(['a.csv', 'a.csv.owner']);
    // Counted for its key after a restart.
    await expect(open().put('runs/2/1/a.csv', bytes(200), 'text/csv', 'key-a')).rejects.toThrow(/take 200\)/);
    // Its file removed by hand: the .owner left alone goes, with its folders, once it is old.
    fs.rmSync(path.join(folder, 'a.csv'));
    const old = new Date(Date.now() - 7200_000);
    fs.utimesSync(path.join(folder, 'a.csv.owner'), old, old);
    await blobs.deleteOlderThan(new Date(Date.now() - 3600_000));
    expect(fs.existsSync(path.join(blobs.root, 'runs', '1'))).toBe(false);
  });

  it("gives back no more than was on disk when it deletes another process's file", async () => {
    const blobs = open();
    await blobs.put('runs/1/1/a.csv', bytes(250), 'text/csv', 'key-a');
    // Another process sharing the folder writes a file for the key after this one counted, and this
    // one deletes it (the attempt that wrote it was taken over).
    await open().put('runs/2/1/a.csv', bytes(50), 'text/csv', 'key-a');
    await blobs.delete('runs/2/1/a.csv');
    // 250 still on disk for the key: 100 more would pass its 300.
    await expect(blobs.put('runs/3/1/a.csv', bytes(100), 'text/csv', 'key-a')).rejects.toThrow(/take 250\)/);
  });

  it('removes the file naming a key with the file it names, at clean-ups', async () => {
    const blobs = open();
    await blobs.put('runs/1/1/a.csv', bytes(100), 'text/csv', 'key-a');
    const folder = path.join(blobs.root, 'runs', '1', '1');
    expect(fs.readdirSync(folder).sort()).toEqual(['a.csv', 'a.csv.owner']);
    // Older than the file it names: kept while the file is.
    const old = new Date(Date.now() - 7200_000);
    fs.utimesSync(path.join(folder, 'a.csv.owner'), old, old);
    expect(await blobs.deleteOlderThan(new Date(Date.now() - 3600_000))).toBe(0);
    expect(fs.readdirSync(folder).sort()).toEqual(['a.csv', 'a.csv.owner']);
    expect(await blobs.deleteOlderThan(new Date(Date.now() + 1000))).toBe(1);
    expect(fs.existsSync(path.join(blobs.root, 'runs', '1'))).toBe(false);
    await expect(blobs.put('runs/2/1/a.csv', bytes(300), 'text/csv', 'key-a')).resolves.toMatchObject({
      bytes: 300,
    });
  });
});

describe('LocalBlobStore clean-up', () => {
  it('leaves a file still being written a day longer than finished ones', async () => {
    const dir = tempDir('local-cleanup');
    try {
      const blobs = new LocalBlobStore(dir, () => 'http://localhost', 'a-download-secret-of-32-characters!');
      const folder = path.join(blobs.root, 'runs', '5', '1');
      fs.mkdirSync(folder, { recursive: true });
      const hoursAgo = (h: number) => new Date(Date.now() - h * 3600_000);
      const file = (name: string, age: number) => {
        fs.writeFileSync(path.join(folder, name), 'x');
        fs.utimesSync(path.join(folder, name), hoursAgo(age), hoursAgo(age));
      };
      file('done.csv', 2);
      // A three-table run's tiers file, not written since the walk moved on to its relationships.
      file('tiers.csv.partial', 2);
      file('dead.csv.partial', 30);
      expect(await blobs.deleteOlderThan(hoursAgo(1))).toBe(2);
      expect(fs.readdirSync(folder)).toEqual(['tiers.csv.partial']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
