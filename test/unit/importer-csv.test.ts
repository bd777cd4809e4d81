import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ByteStore,
  ChunkWriter,
  CsvFatalError,
  CsvParser,
  TextBuffer,
  MAX_OPEN_RECORD_CHARS,
  MAX_RECORD_CHARS,
  parseCsvText,
  readCsvFile,
} from '../../src/import/csv';
import type { CsvSink } from '../../src/import/csv';

interface Got {
  rows: { line: number; fields: string[]; suspect: boolean }[];
  errors: { line: number; reason: string }[];
}

function sink(): CsvSink & Got {
  const got: Got = { rows: [], errors: [] };
  return {
    ...got,
    row(fields, line, suspect) {
      got.rows.push({ line, fields, suspect });
    },
    error(line, reason) {
      got.errors.push({ line, reason });
    },
  };
}

function parse(text: string): Got {
  const s = sink();
  parseCsvText(text, s);
  return { rows: s.rows, errors: s.errors };
}

/** Feeds text in pieces of the given sizes (cycled), as a stream would. */
function parseInPieces(text: string, sizes: number[]): Got {
  const s = sink();
  const p = new CsvParser(s);
  let i = 0;
  let k = 0;
  while (i < text.length) {
    const n = sizes[k++ % sizes.length]!;
    p.push(text.slice(i, i + n));
    i += n;
  }
  p.end();
  return { rows: s.rows, errors: s.errors };
}

const lines = (g: Got): [number, string[]][] => g.rows.map((r) => [r.line, r.fields]);

describe('CsvParser', () => {
  it('splits plain records and numbers physical lines from 1', () => {
    expect(lines(parse('a,b,c\n1,2,3\n'))).toEqual([
      [1, ['a', 'b', 'c']],
      [2, ['1', '2', '3']],
    ]);
  });

  it('accepts a missing final line break', () => {
    expect(lines(parse('a,b\n1,2'))).toEqual([
      [1, ['a', 'b']],
      [2, ['1', '2']],
    ]);
  });

  it('accepts CRLF line ends and strips them', () => {
    expect(lines(parse('a,b\r\n1,2\r\n"x",y\r\n'))).toEqual([
      [1, ['a', 'b']],
      [2, ['1', '2']],
      [3, ['x', 'y']],
    ]);
  });

  it('drops a leading byte order mark', () => {
    expect(lines(parse('\ufeffa,b\n1,2\n'))[0]).toEqual([1, ['a', 'b']]);
  });

  it('keeps empty fields, including a trailing one', () => {
    expect(lines(parse(',a,,\n'))).toEqual([[1, ['', 'a', '', '']]]);
    expect(lines(parse('"a",\n'))).toEqual([[1, ['a', '']]]);
    expect(lines(parse('"",""\n'))).toEqual([[1, ['', '']]]);
  });

  it('unquotes fields with commas and doubled quotes', () => {
    expect(lines(parse('"a,b","say ""hi""",c\n'))).toEqual([[1, ['a,b', 'say "hi"', 'c']]]);
    expect(lines(parse('""""\n'))).toEqual([[1, ['"']]]);
  });

  it('keeps line breaks inside quotes and counts them as physical lines', () => {
    const g = parse('h\n"one\ntwo\r\nthree",x\nnext,y\n');
    expect(lines(g)).toEqual([
      [1, ['h']],
      [2, ['one\ntwo\r\nthree', 'x']],
      [5, ['next', 'y']],
    ]);
    expect(g.rows[1]!.suspect).toBe(true);
    expect(g.rows[2]!.suspect).toBe(false);
  });

  it('skips blank lines but still counts them', () => {
    expect(lines(parse('a\n\n\r\nb\n\n'))).toEqual([
      [1, ['a']],
      [4, ['b']],
    ]);
  });

  it('flags records that may hold control characters', () => {
    const g = parse('a,b\u0007c\nd,e\n');
    expect(g.rows[0]!.fields).toEqual(['a', 'b\u0007c']);
    expect(g.rows[0]!.suspect).toBe(true);
    expect(parse('a,b\rc\n').rows[0]!.suspect).toBe(true);
    expect(parse('a,b\n').rows[0]!.suspect).toBe(false);
  });

  it('reports a quote inside an unquoted field and resumes on the next line', () => {
    const g = parse('a,b"c,d\ne,f\n');
    expect(g.errors).toEqual([{ line: 1, reason: 'quote inside an unquoted field' }]);
    expect(lines(g)).toEqual([[2, ['e', 'f']]]);
  });

  it('reports text after a closing quote', () => {
    const g = parse('"a"b,c\n"ok",d\n');
    expect(g.errors).toEqual([{ line: 1, reason: 'unexpected character after a closing quote' }]);
    expect(lines(g)).toEqual([[2, ['ok', 'd']]]);
  });

  it('reports a quote left open on the last line as that row', () => {
    for (const end of ['', '\n', '\r\n', '\n\n', '\r\n\r\n\n']) {
      const g = parse(`a\n"open,${end}`);
      expect(lines(g)).toEqual([[1, ['a']]]);
      expect(g.errors).toEqual([{ line: 2, reason: 'unterminated quoted field' }]);
    }
  });

  it('stops at a quote never closed that swallows the lines after it, rather than lose them as one row', () => {
    expect(() => parse('a\n"open,\nrest\nmore\n')).toThrow(
      new CsvFatalError(
        'the quote opened on line 2 is never closed, so the 2 lines after it cannot be read as records',
        2,
      ),
    );
    // The line of the quote counts the line breaks of quoted fields before it, in its record too.
    expect(() => parse('"x\ny","open\nrest\nmore')).toThrow(
      /^the quote opened on line 2 is never closed, so the 2 lines/,
    );
    expect(() => parse('"x\ny",1\nb,"open\nrest')).toThrow(
      /^the quote opened on line 3 is never closed, so the 1 line after it/,
    );
  });

  it('gives the same result however the text is split into chunks', () => {
    const text =
      '\ufeffid,name,note\r\n1,"Kaiser & Söhne, GmbH","multi\nline ""quoted"" text"\r\n2,plain,\n\n3,"",x\n4,"a""b","c\r\nd"';
    const whole = parse(text);
    expect(whole.rows).toHaveLength(5);
    for (const sizes of [[1], [2], [3], [5, 1, 7], [13], [64]]) {
      // `suspect` is a per-chunk hint, so only records and errors must match.
      const pieces = parseInPieces(text, sizes);
      expect(lines(pieces)).toEqual(lines(whole));
      expect(pieces.errors).toEqual(whole.errors);
    }
  });
});

describe('readCsvFile', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tg-csv-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads a UTF-8 file with multi-byte characters across chunk boundaries', async () => {
    const rows: string[] = [];
    for (let i = 0; i < 20000; i++) rows.push(`${i},"Société ${i}, Kraków",Ünïcødé ${'é'.repeat(i % 7)}`);
    const path = join(dir, 'big.csv');
    await writeFile(path, `\ufeffa,b,c\n${rows.join('\n')}\n`);
    const got: string[][] = [];
    let lastLine = 0;
    await readCsvFile(path, {
      row(fields, line) {
        got.push(fields);
        lastLine = line;
      },
      error(line, reason) {
        throw new Error(`${line}: ${reason}`);
      },
    });
    expect(got).toHaveLength(20001);
    expect(got[0]).toEqual(['a', 'b', 'c']);
    expect(got[12346]).toEqual(['12345', 'Société 12345, Kraków', `Ünïcødé ${'é'.repeat(12345 % 7)}`]);
    expect(lastLine).toBe(20001);
  });

  it('turns invalid UTF-8 into U+FFFD and flags the record', async () => {
    const path = join(dir, 'bad-utf8.csv');
    await writeFile(
      path,
      Buffer.concat([Buffer.from('a,b\n1,'), Buffer.from([0xff, 0xfe]), Buffer.from('\n')]),
    );
    const got: { fields: string[]; suspect: boolean }[] = [];
    await readCsvFile(path, {
      row: (fields, _l, suspect) => got.push({ fields, suspect }),
      error: () => undefined,
    });
    expect(got[1]!.fields[1]).toContain('\ufffd');
    expect(got[1]!.suspect).toBe(true);
  });

  it('rejects an over-long line without quotes and reads on from the next line, whatever the pieces', () => {
    const long = 'x'.repeat(MAX_RECORD_CHARS + 10);
    const text = `vid,name\nc1,One\nc2,${long}\nc3,Three\nc4,${long}`;
    for (const sizes of [[text.length], [65_536], [4_096, 300_000, 17]]) {
      const got = parseInPieces(text, sizes);
      expect(lines(got)).toEqual([
        [1, ['vid', 'name']],
        [2, ['c1', 'One']],
        [4, ['c3', 'Three']],
      ]);
      expect(got.errors).toEqual([
        { line: 3, reason: `line longer than ${MAX_RECORD_CHARS} characters; skipped` },
        { line: 5, reason: `line longer than ${MAX_RECORD_CHARS} characters; skipped` },
      ]);
    }
  });

  it('reads a range: up to a line break, telling whether a record ended there, and on from it', async () => {
    const path = join(dir, 'range.csv');
    const text = '\ufeffid,note\n1,"two\nlines"\n2,plain\n\ufeff3,bom\n4,last\n';
    await writeFile(path, text);
    const bytes = Buffer.from(text);
    const read = async (start?: number, end?: number) => {
      const s = sink();
      const at = await readCsvFile(path, s, undefined, { start, end });
      return { at, rows: lines(s), errors: s.errors };
    };
    // Up to the line break inside the quoted field: no record ends there.
    const inQuote = bytes.indexOf('\nlines') + 1;
    const first = await read(undefined, inQuote);
    expect(first.at.atRecordStart).toBe(false);
    expect(first.rows).toEqual([[1, ['id', 'note']]]);
    // Up to the line break after it: one does, and the next record is on line 4.
    const after = bytes.indexOf('\n2,') + 1;
    const head = await read(undefined, after);
    expect(head.at).toEqual({ atRecordStart: true, nextLine: 4, sawLong: false });
    expect(head.rows).toEqual([
      [1, ['id', 'note']],
      [2, ['1', 'two\nlines']],
    ]);
    // From there on, lines count from 1 and a byte order mark inside the file is data.
    const tail = await read(after);
    expect(tail.rows).toEqual([
      [1, ['2', 'plain']],
      [2, ['\ufeff3', 'bom']],
      [3, ['4', 'last']],
    ]);
    expect(tail.at).toEqual({ atRecordStart: true, nextLine: 4, sawLong: false });
    expect(tail.errors).toEqual([]);
    const fromBom = await read(bytes.indexOf('\ufeff3'));
    expect(fromBom.rows[0]).toEqual([1, ['\ufeff3', 'bom']]);
  });

  it('tells when it met a line or record longer than the limit, which it reads by where its pieces end', async () => {
    const long = 'x'.repeat(MAX_RECORD_CHARS + 10);
    for (const [name, text] of [
      ['plain', `a,b\n1,${long}\n2,z\n`],
      ['quoted', `a,b\n1,"${long}"\n2,z\n`],
    ] as const) {
      const path = join(dir, `long-${name}.csv`);
      await writeFile(path, text);
      expect((await readCsvFile(path, sink())).sawLong).toBe(true);
    }
    const path = join(dir, 'short.csv');
    await writeFile(path, `a,b\n1,"${'x'.repeat(MAX_RECORD_CHARS - 10)}"\n`);
    expect((await readCsvFile(path, sink())).sawLong).toBe(false);
  });

  it('names the file when a record never ends (an unbalanced quote)', async () => {
    const path = join(dir, 'companies.csv');
    await writeFile(path, `vid,name\nc1,"oops\n${'c2,Name\n'.repeat(MAX_OPEN_RECORD_CHARS / 6)}`);
    await expect(readCsvFile(path, { row: () => undefined, error: () => undefined })).rejects.toThrow(
      /^companies\.csv: record starting at line 2 is still open after 4194304 characters/,
    );
  });

  it('rejects an over-long record with quotes as a row, wherever it starts and however it is read', () => {
    const long = 'x'.repeat(MAX_RECORD_CHARS + 10);
    const filler = 'c0,Filler\n'.repeat(4_000);
    for (const record of [`c2,"Quoted",${long}`, `c2,"${long}"`]) {
      for (const before of ['', filler]) {
        const text = `vid,name,more\n${before}${record}\nc3,Three,x\n`;
        for (const sizes of [[text.length], [65_536], [4_096, 300_000, 17]]) {
          const got = parseInPieces(text, sizes);
          const at = before === '' ? 2 : 4_002;
          expect(got.errors).toEqual([
            { line: at, reason: `record longer than ${MAX_RECORD_CHARS} characters; skipped` },
          ]);
          expect(lines(got).at(-1)).toEqual([at + 1, ['c3', 'Three', 'x']]);
        }
      }
    }
  });
});

describe('ChunkWriter and ByteStore', () => {
  it('writes text and bytes in order, across many buffers', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tg-writer-'));
    try {
      const path = join(dir, 'out.csv');
      const w = await ChunkWriter.create(path);
      const store = new ByteStore();
      const expected: string[] = [];
      for (let i = 0; i < 60000; i++) {
        const text = `row ${i} ${'ß'.repeat(i % 5)},`;
        if (i % 3 === 0) {
          store.writeTo(w, store.push(text));
        } else {
          w.write(text);
        }
        expected.push(text);
        if (w.full) await w.flush();
      }
      w.write('x'.repeat(3 << 20));
      expected.push('x'.repeat(3 << 20));
      await w.close();
      expect(await readFile(path, 'utf8')).toBe(expected.join(''));
      expect(store.size).toBe(20000);
      expect(store.text(3)).toBe(`row 9 ${'ß'.repeat(4)},`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('appends to a file, with small chunks and no batching', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tg-writer-'));
    try {
      const path = join(dir, 'out.csv');
      const a = await ChunkWriter.create(path);
      a.write('head\n');
      await a.close();
      const b = await ChunkWriter.create(path, { append: true, chunkBytes: 64, batchChars: 0 });
      const lines: string[] = [];
      for (let i = 0; i < 100; i++) {
        lines.push(`line ${i} ü\n`);
        b.write(lines[i]!);
        if (b.full) await b.flush();
      }
      await b.close();
      expect(await readFile(path, 'utf8')).toBe(`head\n${lines.join('')}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('TextBuffer', () => {
  it('hands over what was written as UTF-8, then starts afresh', () => {
    const t = new TextBuffer(16);
    const parts: string[] = [];
    for (let i = 0; i < 5000; i++) {
      parts.push(`${i}:ß€;`);
      t.write(parts[i]!);
    }
    const first = t.take();
    expect(first.toString('utf8')).toBe(parts.join(''));
    t.write('again');
    const second = t.take();
    expect(second.toString('utf8')).toBe('again');
    expect(second.buffer).not.toBe(first.buffer);
    expect(t.take().length).toBe(0);
  });
});
