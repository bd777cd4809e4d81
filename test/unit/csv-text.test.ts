import {
  CsvBytes,
  csvField,
  csvHeader,
  csvRecord,
  quotedField,
  spreadsheetText,
} from '../../src/domain/csv-text';
import type { CsvValue } from '../../src/domain/csv-text';

describe('CSV text', () => {
  it('leaves plain fields as they are and empties null, undefined and ""', () => {
    expect(csvField('Acme Corp')).toBe('Acme Corp');
    expect(csvField(0.75)).toBe('0.75');
    expect(csvField(3)).toBe('3');
    expect(csvField(false)).toBe('false');
    expect(csvField(null)).toBe('');
    expect(csvField(undefined)).toBe('');
    expect(csvField('')).toBe('');
  });

  it('quotes a field holding a comma, a quote, a line feed or a carriage return, doubling quotes', () => {
    expect(csvField('Acme, Inc.')).toBe('"Acme, Inc."');
    expect(csvField('The "Best" Co')).toBe('"The ""Best"" Co"');
    expect(csvField('line\nbreak')).toBe('"line\nbreak"');
    // A carriage return alone ends a record for many readers (Excel among them), so it is quoted too.
    expect(csvField('carriage\rreturn')).toBe('"carriage\rreturn"');
    expect(csvField('[8471,8473]')).toBe('"[8471,8473]"');
  });

  it('writes a record in the order of the columns, ended by CRLF, whatever the order of its keys', () => {
    const columns = ['b', 'a', 'c', 'd'];
    expect(csvRecord(columns, { a: 1, b: 'x,y', c: null, d: 'z' })).toBe('"x,y",1,,z\r\n');
    expect(csvRecord(columns, {})).toBe(',,,\r\n');
    expect(csvHeader(columns)).toBe('b,a,c,d\r\n');
  });

  it('reads back, field for field, with an RFC 4180 reader', () => {
    const values = ['plain', 'a,b', 'say "hi"', 'two\r\nlines', 'cr\ronly', '', 'ü ß 中'];
    const columns = values.map((_, i) => `c${i}`);
    const record = Object.fromEntries(values.map((v, i) => [`c${i}`, v]));
    expect(parseRecord(csvRecord(columns, record))).toEqual(values);
  });
});

/** A strict reader of one RFC 4180 record ending in CRLF: a bare CR or LF outside quotes is an error. */
function parseRecord(text: string): string[] {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    let field = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error('unterminated quote');
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += text[i++];
      }
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\r' && text[i] !== '\n') field += text[i++];
    }
    fields.push(field);
    if (text[i] === ',') {
      i++;
      continue;
    }
    if (text.slice(i) !== '\r\n')
      throw new Error(`unexpected text after a field: ${JSON.stringify(text.slice(i))}`);
    return fields;
  }
}

describe('quotedField', () => {
  it('quotes only when needed', () => {
    expect(quotedField('plain')).toBe('plain');
    expect(quotedField('a,b')).toBe('"a,b"');
    expect(quotedField('say "hi"')).toBe('"say ""hi"""');
    expect(quotedField('two\nlines')).toBe('"two\nlines"');
    expect(quotedField('')).toBe('');
  });
});

describe('text for a spreadsheet', () => {
  it('makes a text that begins like a formula or a DDE call plain text, and leaves the rest alone', () => {
    for (const v of ['=1+1', '+44 20', '-2', '@SUM(A1)', '\tx', '\rx'])
      expect(spreadsheetText(v)).toBe(`'${v}`);
    for (const v of ['Acme', ' =1', "'quoted", '', 'a=b']) expect(spreadsheetText(v)).toBe(v);
    expect(csvField('=1,2', true)).toBe(`"'=1,2"`);
    expect(csvField(-2, true)).toBe('-2');
    expect(csvField('=1,2')).toBe('"=1,2"');
  });
});

describe('CsvBytes', () => {
  const values: CsvValue[] = [
    'plain-ascii_1',
    '',
    null,
    undefined,
    0,
    0.25,
    1e-7,
    -3,
    true,
    'a,b',
    'say "hi"',
    'two\r\nlines',
    'only\nfeed',
    'Ünïcödé 株式会社',
    'naïve, "quoted"',
    '=SUM(A1)',
    '+1',
    '-1+cmd',
    '@here',
    '\tTab',
    'x'.repeat(5000),
  ];

  it.each([false, true])(
    'writes every field as csvField does (spreadsheet: %s), growing as it must',
    (sheet) => {
      // A buffer far too small to start with: every kind of field makes it grow.
      const out = new CsvBytes(sheet, 4);
      for (const v of values) {
        out.field(v);
        out.comma();
      }
      out.end();
      const expected = `${values.map((v) => `${csvField(v, sheet)},`).join('')}\r\n`;
      expect(out.take().toString('utf8')).toBe(expected);
      // Taken, the writer starts again empty.
      out.field('next');
      out.end();
      expect(out.take().toString('utf8')).toBe('next\r\n');
    },
  );

  it.each([false, true])('writes records as csvRecord does (spreadsheet: %s)', (sheet) => {
    const columns = ['a', 'b', 'c', 'missing'];
    const records = [
      { a: 'x', b: 1, c: null },
      { a: '-2', b: -2, c: 'two, "quoted"' },
      { a: 'Ünïcödé', b: '', c: '=1+1' },
    ];
    const out = new CsvBytes(sheet);
    for (const r of records) out.record(columns, r);
    expect(out.take().toString('utf8')).toBe(records.map((r) => csvRecord(columns, r, sheet)).join(''));
  });

  it('copies encoded fields as they are', () => {
    const out = new CsvBytes(true);
    const name = out.encoded('=HYPERLINK("x")');
    out.bytes(name);
    out.comma();
    out.bytes(name);
    expect(out.take().toString('utf8')).toBe(`"'=HYPERLINK(""x"")","'=HYPERLINK(""x"")"`);
  });
});
