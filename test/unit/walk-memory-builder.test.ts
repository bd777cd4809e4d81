import { NotHeldExactly, WalkMemoryBuilder } from '../../src/store/walk-memory';
import type { TierRelationship } from '../../src/domain/tier-walk';
import { fnv1a } from '../../src/store/string-hash';

/** Two companies, a supplying b, with the relationship's lists given as `hs` and `types`. */
function built(hs: unknown, types: unknown, latest: unknown = new Date('2024-05-06T00:00:00Z')) {
  const builder = new WalkMemoryBuilder(['a', 'b'], 1);
  builder.addCompanies([
    { off: 0, name: 'A', cid_id: 'a', count_suppliers: 1, count_customers: 0 },
    { off: 1, name: 'B', cid_id: 'b', count_suppliers: 0, count_customers: 1 },
  ]);
  builder.addRelationships([
    {
      s: 1,
      c: 0,
      edge_id: 'e1',
      confidence_score: 0.5,
      status_code: null,
      hs_codes: hs,
      evidence_types: types,
      latest,
    },
  ]);
  return builder.finish();
}

async function rowsOf(hs: unknown, types: unknown, latest?: unknown): Promise<TierRelationship[]> {
  const memory = built(hs, types, latest);
  const rows: TierRelationship[] = [];
  await memory.walk(
    {
      root: { vid: 'a', tier: 0, name: 'A', company_legal_name: null, cid_id: 'a' } as never,
      rootOffset: 0,
      direction: 'suppliers',
      tiers: 1,
      evidenceFrom: null,
    },
    { companies: () => undefined, relationships: (_tier, batch) => void rows.push(...batch) },
  );
  return rows;
}

describe('WalkMemoryBuilder lists', () => {
  it('reads lists stored as text (embedded) and as lists of strings (Neo4j) alike', async () => {
    const fromText = await rowsOf('[8471,8473]', '[customs]');
    const fromLists = await rowsOf(['8471', '8473'], ['customs']);
    expect(fromLists).toEqual(fromText);
    expect(fromLists.map((r) => [r.hs_codes, r.evidence_types])).toEqual([[['8471', '8473'], ['customs']]]);
    expect((await rowsOf([], null)).map((r) => [r.hs_codes, r.evidence_types])).toEqual([[[], []]]);
  });

  it('refuses a list element it could not give back as it was', () => {
    expect(() => built(['84,71'], [])).toThrow(NotHeldExactly);
    expect(() => built([8471], [])).toThrow(NotHeldExactly);
    expect(() => built({ code: '8471' }, [])).toThrow(NotHeldExactly);
  });

  it('takes a date as a timestamp (embedded) or as epoch milliseconds (Neo4j) alike', async () => {
    const fromDate = await rowsOf([], [], new Date('2024-05-06T00:00:00Z'));
    expect(await rowsOf([], [], Date.UTC(2024, 4, 6))).toEqual(fromDate);
    expect(fromDate[0]!.latest_evidence_date).toBe('2024-05-06');
    expect(() => built([], [], 1.5)).toThrow(NotHeldExactly);
    expect(() => built([], [], '2024-05-06')).toThrow(NotHeldExactly);
  });
});

describe('WalkMemoryBuilder lists read from staged bytes', () => {
  const idsOf = (builder: WalkMemoryBuilder, texts: string[]) => {
    const line = Buffer.from(`x\t${texts.join('\t')}\t`);
    let at = 2;
    return texts.map((t) => {
      const end = at + Buffer.byteLength(t);
      const id = builder.listIdOfBytes(line, at, end);
      at = end + 1;
      return id;
    });
  };

  it('gives a list the id its text gets, once per distinct list', () => {
    const builder = new WalkMemoryBuilder(['a'], 0);
    const texts = ['[text]', '[]', '[customs,text]', '[text]', '', '[café]', '[]', '[café]'];
    const ids = idsOf(builder, texts);
    expect(ids).toEqual([0, 1, 2, 0, 3, 4, 1, 4]);
    expect(texts.map((t) => builder.listId(t))).toEqual(ids);
  });

  it('tells apart lists whose texts hash alike', () => {
    // Two texts with the same FNV-1a hash (found by a search over random ones).
    expect(fnv1a('[a7ot6z4]')).toBe(fnv1a('[yfwxu7w]'));
    const builder = new WalkMemoryBuilder(['a'], 0);
    expect(idsOf(builder, ['[a7ot6z4]', '[yfwxu7w]', '[a7ot6z4]', '[yfwxu7w]'])).toEqual([0, 1, 0, 1]);
  });
});

describe('WalkMemoryBuilder guesses', () => {
  const bytes = (text: string) => Buffer.from(text, 'utf8');

  it('takes a guessed offset only when its vid is the text, as ASCII', () => {
    // 'Ã©' compared code unit by byte would match the bytes C3 A9, which are 'é'.
    const vids = ['Ã©', 'é', 'a', ''];
    const builder = new WalkMemoryBuilder(vids, 0);
    const of = (text: string, guess: number) =>
      builder.offsetOfBytes(bytes(text), 0, Buffer.byteLength(text), guess);
    expect(of('é', 0)).toBe(1);
    expect(of('Ã©', 0)).toBe(0);
    expect(of('a', 2)).toBe(2);
    expect(of('a', 0)).toBe(2);
    for (const guess of [-1, 4, 1_000]) expect(of('a', guess)).toBe(2);
    // An empty text is no company's vid, though an offset of none holds ''.
    expect(of('', 3)).toBe(-1);
    expect(of('b', 2)).toBe(-1);
  });

  it('skips an offset that holds no vid at all', () => {
    const vids: string[] = [];
    vids[1] = 'a';
    const builder = new WalkMemoryBuilder(vids, 0);
    expect(builder.offsetOfBytes(bytes('a'), 0, 1, 0)).toBe(1);
  });

  it('takes a guessed list only when its text is the bytes, as ASCII', () => {
    const builder = new WalkMemoryBuilder(['a'], 0);
    const odd = builder.listId('[Ã©]');
    const plain = builder.listId('[]');
    const of = (text: string, guess: number) =>
      builder.listIdOfBytes(bytes(text), 0, Buffer.byteLength(text), guess);
    const cafe = of('[é]', odd);
    expect(cafe).not.toBe(odd);
    expect(builder.listId('[é]')).toBe(cafe);
    expect(of('[]', plain)).toBe(plain);
    expect(of('[]', odd)).toBe(plain);
    for (const guess of [-1, 99]) expect(of('[]', guess)).toBe(plain);
  });
});
