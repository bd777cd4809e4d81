import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { numberOfBytes, readStagingBlocks, readStagingFile } from '../../src/store/staging-file';

describe('readStagingFile', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tg-staging-file-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('splits rows at line feeds and fields at tabs, across read chunks and multi-byte characters', async () => {
    const file = path.join(dir, 'T.tsv');
    // Rows long enough that the 64 KiB reads end inside rows and inside 'ß' and '日' (2 and 3 bytes).
    const rows = Array.from({ length: 3000 }, (_, i) => [`v${i}`, 'ß日'.repeat(i % 50), '', '{"k":"a\\"b"}']);
    // One row spanning many reads.
    rows.splice(1500, 0, ['long', 'y'.repeat(300_000), '', '[]']);
    fs.writeFileSync(file, `a\tb\tc\td\n${rows.map((r) => r.join('\t')).join('\n')}`);
    const seen: [number, string[]][] = [];
    let chunks = 0;
    await readStagingFile(
      file,
      (fields, line) => seen.push([line, fields]),
      () => {
        chunks++;
      },
    );
    expect(seen[0]).toEqual([1, ['a', 'b', 'c', 'd']]);
    expect(seen.slice(1).map(([, f]) => f)).toEqual(rows);
    expect(seen.map(([line]) => line)).toEqual(Array.from({ length: rows.length + 1 }, (_, i) => i + 1));
    expect(chunks).toBeGreaterThan(2);
  });

  it('hands whole lines as bytes after the header, whatever the block size, the last line unended', async () => {
    const file = path.join(dir, 'B.tsv');
    const lines = ['k1\tß日', '', 'k2\t' + 'x'.repeat(40), 'k3\tlast'];
    fs.writeFileSync(file, `a\tb\n${lines.join('\n')}`);
    for (const size of [1, 7, 64, 1 << 20]) {
      const headers: string[] = [];
      const blocks: string[] = [];
      await readStagingBlocks(
        file,
        (text) => headers.push(text),
        (bytes, start, end) => {
          const text = bytes.toString('utf8', start, end);
          // Whole lines only: a block ends with a line feed unless it ends the file.
          expect(text.endsWith('\n') || text.endsWith('last')).toBe(true);
          blocks.push(text);
        },
        undefined,
        size,
      );
      expect(headers).toEqual(['a\tb']);
      expect(blocks.join('')).toBe(lines.join('\n'));
    }
    const bare = path.join(dir, 'H.tsv');
    fs.writeFileSync(bare, 'a\tb');
    const seen: string[] = [];
    await readStagingBlocks(
      bare,
      (text) => seen.push(text),
      () => seen.push('block'),
    );
    expect(seen).toEqual(['a\tb']);
  });
});

describe('numberOfBytes', () => {
  it('reads a staged number as Number reads its text, to the last bit', () => {
    const texts = [
      '0.793',
      '0.1',
      '0.3',
      '1',
      '-0',
      '-0.5',
      '007',
      '.5',
      '5.',
      '0.30000000000000004',
      '123456789012345',
      '1234567890123456789',
      '0.000000000000001',
      '1e3',
      '-',
      '.',
      '1.2.3',
      '+1',
      'Infinity',
      '٣',
    ];
    const line = Buffer.from(texts.join('\t'));
    let at = 0;
    for (const text of texts) {
      const end = at + Buffer.byteLength(text);
      expect([text, numberOfBytes(line, at, end)]).toEqual([text, Number(text)]);
      at = end + 1;
    }
    expect(numberOfBytes(line, 3, 3)).toBeNull();
  });
});
