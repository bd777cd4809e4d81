import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { workerFileAvailable } from '../worker-file';
import { TrigramIndex, TrigramIndexBuilder } from './trigram-index';
import { PackedStrings } from '../store/packed-strings';
import { LeadLists } from './lead-lists';
import type { SnapshotReader, SnapshotWriter } from '../store/snapshot';
import { LEGAL_FORMS, acronymsOf, allowedEdits, editDistanceWithin, wordsOf } from './name-words';

/** What a searchable name of a company is: its name, an alias given at import, or a derived acronym. */
export type EntryKind = 'name' | 'alias' | 'acronym';
const KINDS: readonly EntryKind[] = ['name', 'alias', 'acronym'];

/**
 * Word-level index over every searchable name of every company: the vocabulary of folded words (sorted,
 * for prefix ranges), each word's postings (names containing it, most important company first), each
 * name's words, and a trigram index over the vocabulary that finds the words a typo may stand for.
 * Immutable once built.
 */
export class WordIndex {
  private constructor(
    private readonly vocab: string[],
    private readonly postStart: Uint32Array,
    private readonly postings: Uint32Array,
    readonly entryDoc: Uint32Array,
    readonly entryText: PackedStrings,
    private readonly entryKind: Uint8Array,
    /** Where each entry's words begin in `entryWords` (entries + 1 values). */
    readonly wordStart: Uint32Array,
    /** Vocabulary ids of every entry's words, in order, entry after entry. */
    readonly entryWords: Uint32Array,
    /** First entry of each doc (entries of a doc are contiguous), size + 1 values. */
    private readonly docEntryStart: Uint32Array,
    private readonly vocabTrigrams: TrigramIndex,
    /** 1 for each vocabulary word that is a legal form (Co, Ltd, GmbH, ...). */
    private readonly legal: Uint8Array,
    /** Where each vocabulary word's typo words begin in `typoIds` (vocabulary + 1 values). */
    private readonly typoStart: Uint32Array,
    /** {@link typoWords} of every vocabulary word, found once when the index is built. */
    private readonly typoIds: Uint32Array,
    /**
     * Per entry, bit (id % 32) set for each vocabulary id among its words: a word whose bit is clear
     * is not in the entry, read without its word list.
     */
    readonly entryBits: Uint32Array,
    /** Every entry by the beginnings of its significant words (see {@link namesBeginning}). */
    private readonly leads: LeadLists,
  ) {}

  /**
   * `names[doc]` lists the doc's name then its aliases; acronyms are derived here. `rank[doc]` is the
   * doc's place in importance order (0 = most important), used to order postings. About 11 s of work
   * at 1M companies, in a server that keeps answering: the long loops let other work run between
   * slices (see {@link BUILD_SLICE_MS}); `signal` stops it (it rejects) at the next of them.
   */
  static async build(
    names: readonly (readonly string[])[],
    rank: Uint32Array,
    sliceMs = BUILD_SLICE_MS,
    signal?: AbortSignal,
  ): Promise<WordIndex> {
    return (await WordIndex.start(names, sliceMs, signal)).finish(rank);
  }

  /**
   * The first half of {@link build}, which needs no rank: every name's words read (or taken from a
   * {@link WordIndexBuilder} that read them as a build's rows came) and the vocabulary sorted. The
   * typo words of the vocabulary (some 4 to 6 s at 1M companies) are then found on a thread of their
   * own where one can run, so that other work of the build can be done on this one before `finish`
   * waits for them. From a WordIndexBuilder, the thread is started before this returns its promise.
   * That thread starts at this one's priority, and takes `typoPriority.to` once asked to (see
   * {@link TypoPriority}).
   */
  static async start(
    names: readonly (readonly string[])[] | WordIndexBuilder,
    sliceMs = BUILD_SLICE_MS,
    signal?: AbortSignal,
    typoPriority?: TypoPriority,
  ): Promise<{ finish(rank: Uint32Array): Promise<WordIndex> }> {
    const slice = new Slicer(sliceMs, signal);
    let read = names;
    if (!(read instanceof WordIndexBuilder)) {
      const all = read;
      read = new WordIndexBuilder();
      for (let doc = 0; doc < all.length; doc++) {
        if ((doc & 1023) === 0) await slice.next();
        read.add(all[doc]!);
      }
    }
    const { words, entryDoc, entryText, entryKind, rawWords, wordStart } = read;
    const docEntryStart = Uint32Array.from(read.docEntryStart);

    // Vocabulary ids become positions in sorted order, so a prefix is a contiguous range of ids.
    const vocab = [...words.keys()].sort();
    const remap = new Uint32Array(words.size);
    vocab.forEach((w, i) => (remap[words.get(w)!] = i));
    const entryWords = Uint32Array.from(rawWords, (id) => remap[id]!);
    const vocabTrigrams = vocabularyTrigrams(vocab);
    const typos = typoTable(vocab, vocabTrigrams, slice, signal, typoPriority);
    // Waited for in finish(); a failure until then is not an unhandled one.
    typos.catch(() => undefined);
    return {
      finish: async (rank) => {
        const entries = entryDoc.length;
        const starts = Uint32Array.from(wordStart);
        const postStart = new Uint32Array(vocab.length + 1);
        for (let e = 0; e < entries; e++) {
          if ((e & 4095) === 0) await slice.next();
          for (let k = starts[e]!, to = starts[e + 1]!; k < to; k++)
            if (firstInEntry(entryWords, starts[e]!, k)) postStart[entryWords[k]! + 1]!++;
        }
        for (let w = 1; w <= vocab.length; w++) postStart[w]! += postStart[w - 1]!;
        const fill = postStart.slice(0, vocab.length);
        const postings = new Uint32Array(postStart[vocab.length]!);
        // Entries in importance order, so each posting list comes out most important first.
        const byRank = entriesByRank(entryDoc, rank);
        for (let k = 0; k < byRank.length; k++) {
          if ((k & 4095) === 0) await slice.next();
          const e = byRank[k]!;
          for (let at = starts[e]!, to = starts[e + 1]!; at < to; at++)
            if (firstInEntry(entryWords, starts[e]!, at)) postings[fill[entryWords[at]!]!++] = e;
        }
        const legal = Uint8Array.from(vocab, (w) => (LEGAL_FORMS.has(w) ? 1 : 0));
        const leads = await LeadLists.build(
          byRank,
          (e, out) => significantIds(starts, entryWords, legal, e, out),
          slice,
        );
        const { typoStart, typoIds } = await typos;
        return new WordIndex(
          vocab,
          postStart,
          postings,
          Uint32Array.from(entryDoc),
          PackedStrings.from(entryText),
          Uint8Array.from(entryKind),
          starts,
          entryWords,
          docEntryStart,
          vocabTrigrams,
          legal,
          typoStart,
          typoIds,
          bitsOf(starts, entryWords),
          leads,
        );
      },
    };
  }

  /** Saves the index (see {@link WordIndex.readFrom}). */
  writeTo(w: SnapshotWriter): void {
    w.json(this.vocab).array(this.postStart).array(this.postings).array(this.entryDoc);
    this.entryText.writeTo(w);
    w.array(this.entryKind).array(this.wordStart).array(this.entryWords);
    w.array(this.docEntryStart);
    this.vocabTrigrams.writeTo(w);
    w.array(this.legal).array(this.typoStart).array(this.typoIds).array(this.entryBits);
    this.leads.writeTo(w);
  }

  static readFrom(r: SnapshotReader): WordIndex | null {
    const vocab = r.json<string[]>();
    const postStart = r.u32();
    const postings = r.u32();
    const entryDoc = r.u32();
    const entryText = PackedStrings.readFrom(r);
    if (!entryText) return null;
    return new WordIndex(
      vocab,
      postStart,
      postings,
      entryDoc,
      entryText,
      r.u8(),
      r.u32(),
      r.u32(),
      r.u32(),
      TrigramIndex.readFrom(r),
      r.u8(),
      r.u32(),
      r.u32(),
      r.u32(),
      LeadLists.readFrom(r),
    );
  }

  kindOf(entry: number): EntryKind {
    return KINDS[this.entryKind[entry]!]!;
  }

  /** The entry's kind as stored (0 name, 1 alias, 2 acronym), for reading it ahead. */
  entryKindCode(entry: number): number {
    return this.entryKind[entry]!;
  }

  /** Entries of a doc: [first, end). */
  entriesOf(doc: number): [number, number] {
    return [this.docEntryStart[doc]!, this.docEntryStart[doc + 1]!];
  }

  /** Whether the entry holds the vocabulary word `id`. */
  entryHolds(entry: number, id: number): boolean {
    const ids = this.entryWords;
    for (let k = this.wordStart[entry]!; k < this.wordStart[entry + 1]!; k++) if (ids[k] === id) return true;
    return false;
  }

  /** A vocabulary word. */
  word(id: number): string {
    return this.vocab[id]!;
  }

  /** Length of a vocabulary word. */
  wordLength(id: number): number {
    return this.vocab[id]!.length;
  }

  /** Whether a vocabulary word is a legal form. */
  isLegal(id: number): boolean {
    return this.legal[id] === 1;
  }

  /** Vocabulary id of a word, or -1. */
  idOf(word: string): number {
    const at = this.lowerBound(word);
    return at < this.vocab.length && this.vocab[at] === word ? at : -1;
  }

  /** Vocabulary ids [from, to) of the words starting with `prefix`. */
  prefixRange(prefix: string): [number, number] {
    return [this.lowerBound(prefix), this.lowerBound(`${prefix}\uffff`)];
  }

  /** Number of vocabulary words: ids run from 0 to this, excluded. */
  get vocabularySize(): number {
    return this.vocab.length;
  }

  /**
   * The vocabulary ranges [from, to) of every beginning that more than `minWords` words share, as
   * {@link prefixRange} gives them: "s", "co" and the like at a million companies. Each range once.
   */
  wideRanges(minWords: number): [number, number][] {
    const out: [number, number][] = [];
    const seen = new Set<string>();
    // A beginning shared this widely lies within one of the shorter beginnings found before it.
    let within: [number, number][] = [[0, this.vocab.length]];
    for (let length = 1; within.length > 0; length++) {
      const next: [number, number][] = [];
      for (const [lo, hi] of within) {
        for (let id = lo; id < hi;) {
          const word = this.vocab[id]!;
          if (word.length < length) {
            id++;
            continue;
          }
          const [from, to] = this.prefixRange(word.slice(0, length));
          if (to - from > minWords) {
            next.push([from, to]);
            const key = `${from}:${to}`;
            if (!seen.has(key)) {
              seen.add(key);
              out.push([from, to]);
            }
          }
          id = Math.max(to, id + 1);
        }
      }
      within = next;
    }
    return out;
  }

  /**
   * The entries whose significant words (legal forms left out, unless the entry has nothing else)
   * begin with the vocabulary ids `ids`: first those with no significant word after them, then those
   * with one more, and so on, each most important company first. Entries of another beginning
   * may be among them (see {@link beginsWith}).
   */
  namesBeginning(ids: readonly number[]): Uint32Array {
    return this.leads.listOf(ids);
  }

  /**
   * Whether the entry's significant words begin with the vocabulary ids `ids`; with `next`, also
   * whether a significant word follows them whose id is in [next[0], next[1]) (a word that begins
   * with a typed beginning: see {@link prefixRange}).
   */
  beginsWith(entry: number, ids: readonly number[], next?: readonly [number, number]): boolean {
    const out = this.beginning;
    const m = significantIds(this.wordStart, this.entryWords, this.legal, entry, out);
    if (m < ids.length + (next ? 1 : 0)) return false;
    for (let i = 0; i < ids.length; i++) if (out[i] !== ids[i]) return false;
    if (!next) return true;
    const following = out[ids.length]!;
    return following >= next[0] && following < next[1];
  }

  private readonly beginning: number[] = [];

  /** Writes the entry's significant word ids into `out` and returns how many there are. */
  significantOf(entry: number, out: number[]): number {
    return significantIds(this.wordStart, this.entryWords, this.legal, entry, out);
  }

  /** Number of names containing a word. */
  frequency(id: number): number {
    return this.postStart[id + 1]! - this.postStart[id]!;
  }

  /** Where a word's postings lie among all postings: [from, to). */
  postingRange(id: number): [number, number] {
    return [this.postStart[id]!, this.postStart[id + 1]!];
  }

  /** Postings of all words. */
  get postingCount(): number {
    return this.postings.length;
  }

  /** Names containing a word, most important company first. */
  postingsOf(id: number): Uint32Array {
    return this.postings.subarray(this.postStart[id], this.postStart[id + 1]);
  }

  /**
   * Name words a query word may be a typo of: a letter missing, added, doubled, changed or two neighbours
   * swapped (two such edits in words of nine letters or more). Found through trigram similarity over the
   * vocabulary, then checked by edit distance; the word itself is not included.
   */
  typoWords(word: string): Iterable<number> {
    const id = this.idOf(word);
    if (id >= 0) return this.typoIds.subarray(this.typoStart[id], this.typoStart[id + 1]);
    return typoWordsOf(word, this.vocab, this.vocabTrigrams);
  }

  private lowerBound(word: string): number {
    let lo = 0;
    let hi = this.vocab.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.vocab[mid]! < word) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/**
 * Whether the word at `k` is the first of its kind in the entry starting at `from`: an entry has a
 * few words, and a Set per entry cost more than looking back over them.
 */
function firstInEntry(entryWords: Uint32Array, from: number, k: number): boolean {
  const w = entryWords[k];
  for (let j = from; j < k; j++) if (entryWords[j] === w) return false;
  return true;
}

/**
 * Entry numbers ordered by their doc's rank, entries of one rank in their own order: what sorting by
 * `rank[entryDoc[e]]`, then `e`, gives. A stable counting sort over the ranks (a build's ranks are
 * the places 0 to docs - 1): a comparison sort calls back into JavaScript for each of its some
 * 60 million comparisons at 1M companies (2.9M entries), seconds of CPU (bench/README.md). Ranks far
 * above the number of entries are sorted by comparison instead.
 */
export function entriesByRank(entryDoc: readonly number[], rank: Uint32Array): Uint32Array {
  const n = entryDoc.length;
  let top = 0;
  for (let e = 0; e < n; e++) top = Math.max(top, rank[entryDoc[e]!]!);
  if (top > 4 * n + 1024) {
    return Uint32Array.from(entryDoc.keys()).sort(
      (a, b) => rank[entryDoc[a]!]! - rank[entryDoc[b]!]! || a - b,
    );
  }
  const at = new Uint32Array(top + 2);
  for (let e = 0; e < n; e++) at[rank[entryDoc[e]!]! + 1]!++;
  for (let r = 1; r <= top + 1; r++) at[r]! += at[r - 1]!;
  const out = new Uint32Array(n);
  for (let e = 0; e < n; e++) out[at[rank[entryDoc[e]!]!]!++] = e;
  return out;
}

/** The vocabulary words `word` may be a typo of (see {@link WordIndex.typoWords}). */
function typoWordsOf(word: string, vocab: readonly string[], vocabTrigrams: TrigramIndex): number[] {
  const edits = allowedEdits(word.length);
  if (edits === 0) return [];
  const { matches } = vocabTrigrams.search(word, { threshold: 0.2, limit: 64, offset: 0 });
  return matches
    .map((m) => m.doc)
    .filter((id) => {
      const w = vocab[id]!;
      return w !== word && editDistanceWithin(word, w, edits) <= edits;
    });
}

/**
 * The names of a {@link WordIndex} read doc by doc, as a build reads its rows, so that the words are
 * found while the rest is still being read; {@link WordIndex.start} goes on from here.
 */
export class WordIndexBuilder {
  readonly words = new Map<string, number>();
  readonly entryDoc: number[] = [];
  readonly entryText: string[] = [];
  readonly entryKind: number[] = [];
  readonly rawWords: number[] = [];
  readonly wordStart: number[] = [0];
  /** First entry of each doc added, and one more place for the end. */
  readonly docEntryStart: number[] = [0];

  /** Adds the next doc (0 first): its name, then its aliases; acronyms are derived here. */
  add(names: readonly string[]): void {
    const doc = this.docEntryStart.length - 1;
    this.docEntryStart[doc] = this.entryDoc.length;
    const seen = new Set<string>();
    names.forEach((text, k) => {
      const ws = wordsOf(text);
      const key = ws.join(' ');
      if (ws.length === 0 || seen.has(key)) return;
      seen.add(key);
      this.addEntry(doc, text, k === 0 ? 0 : 1, ws);
      for (const a of acronymsOf(ws)) {
        if (seen.has(a)) continue;
        seen.add(a);
        this.addEntry(doc, a.toUpperCase(), 2, [a]);
      }
    });
    this.docEntryStart.push(this.entryDoc.length);
  }

  private addEntry(doc: number, text: string, kind: number, ws: readonly string[]): void {
    this.entryDoc.push(doc);
    this.entryText.push(text);
    this.entryKind.push(kind);
    for (const w of ws) {
      let id = this.words.get(w);
      if (id === undefined) this.words.set(w, (id = this.words.size));
      this.rawWords.push(id);
    }
    this.wordStart.push(this.rawWords.length);
  }
}

/** The typo words of every vocabulary word: word `id`'s are `typoIds[typoStart[id], typoStart[id + 1])`. */
export interface TypoTable {
  typoStart: Uint32Array<ArrayBuffer>;
  typoIds: Uint32Array<ArrayBuffer>;
}

/** The trigram index over the vocabulary that typo words are found through. */
export function vocabularyTrigrams(vocab: readonly string[]): TrigramIndex {
  const builder = new TrigramIndexBuilder();
  for (const w of vocab) builder.add(w);
  return builder.build();
}

/**
 * Most query words are vocabulary words: their typo words are looked up, not searched for. Finding
 * them takes some 6 s for the 86,000 words of 1M generated companies (3.7 MB), here between the slices
 * of `slice` (a thread of its own calls this with none).
 */
export async function typoTableOf(
  vocab: readonly string[],
  vocabTrigrams: TrigramIndex,
  slice?: { next(): Promise<void> },
): Promise<TypoTable> {
  const typoStart = new Uint32Array(vocab.length + 1);
  const typoIds: number[] = [];
  for (let id = 0; id < vocab.length; id++) {
    if (slice && (id & 63) === 0) await slice.next();
    for (const t of typoWordsOf(vocab[id]!, vocab, vocabTrigrams)) typoIds.push(t);
    typoStart[id + 1] = typoIds.length;
  }
  return { typoStart, typoIds: Uint32Array.from(typoIds) };
}

/**
 * When the typo thread of a build takes which priority (a nice value, Linux): a build at the lowest
 * priority starts it there too (a thread inherits its creator's), and raises its own once the work it
 * gave way to is done; it then stores 1 in `raiseWhen[0]`, and the typo thread, which looks between
 * words, takes `to` as well. Unless asked, the thread keeps the priority it started with.
 */
export interface TypoPriority {
  raiseWhen: Int32Array;
  to: number;
}

/** What a typo thread is given (typo-worker.ts). */
export interface TypoThreadData {
  vocab: readonly string[];
  priority?: TypoPriority;
}

/** Below this many words the typo table is found on the building thread: a thread costs more to start. */
export const TYPO_THREAD_MIN_WORDS = 2000;
const TYPO_WORKER_FILE = join(__dirname, 'typo-worker.js');

/**
 * {@link typoTableOf} on a thread of its own when the compiled worker script is there (it is not when
 * running from TypeScript sources) and the vocabulary is large enough; on this thread, between the
 * slices of `slice`, otherwise or when that thread fails. `signal` ends the thread.
 */
function typoTable(
  vocab: readonly string[],
  vocabTrigrams: TrigramIndex,
  slice: Slicer,
  signal?: AbortSignal,
  priority?: TypoPriority,
): Promise<TypoTable> {
  const here = () => typoTableOf(vocab, vocabTrigrams, slice);
  if (vocab.length < TYPO_THREAD_MIN_WORDS || !workerFileAvailable(TYPO_WORKER_FILE)) {
    return here();
  }
  return new Promise<TypoTable>((resolve, reject) => {
    signal?.throwIfAborted();
    const worker = new Worker(TYPO_WORKER_FILE, {
      workerData: { vocab, priority } satisfies TypoThreadData,
    });
    const stop = () => void worker.terminate();
    signal?.addEventListener('abort', stop, { once: true });
    let answered = false;
    worker.once('message', (table: TypoTable) => {
      answered = true;
      resolve(table);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      signal?.removeEventListener('abort', stop);
      if (!answered) reject(new Error(`typo thread exited with ${code}`));
    });
  }).catch(() => {
    // Stopped: so is the build. Failed otherwise (it could not start, say): found here instead.
    if (signal?.aborted) throw signal.reason;
    return here();
  });
}

/**
 * Writes the entry's significant word ids into `out` and returns how many there are: its words that are
 * not legal forms, or all of them when it has nothing else (as significantWords does for a query).
 */
function significantIds(
  wordStart: Uint32Array,
  entryWords: Uint32Array,
  legal: Uint8Array,
  entry: number,
  out: number[],
): number {
  const from = wordStart[entry]!;
  const to = wordStart[entry + 1]!;
  let m = 0;
  for (let k = from; k < to; k++) if (legal[entryWords[k]!] === 0) out[m++] = entryWords[k]!;
  if (m === 0) for (let k = from; k < to; k++) out[m++] = entryWords[k]!;
  return m;
}

/** {@link WordIndex.entryBits} of every entry. */
function bitsOf(wordStart: Uint32Array, entryWords: Uint32Array): Uint32Array {
  const bits = new Uint32Array(wordStart.length - 1);
  for (let e = 0; e < bits.length; e++) {
    let b = 0;
    for (let k = wordStart[e]!; k < wordStart[e + 1]!; k++) b |= 1 << (entryWords[k]! & 31);
    bits[e] = b >>> 0;
  }
  return bits;
}

/** Longest stretch a build works without letting other work of the process run. */
export const BUILD_SLICE_MS = 50;

/** Lets a long loop give way once `ms` have passed since it last did, and stop when `signal` says so. */
class Slicer {
  private since = performance.now();

  constructor(
    private readonly ms: number,
    private readonly signal?: AbortSignal,
  ) {}

  /** Resolves at once within a slice, else after other pending work has had its turn; rejects once aborted. */
  async next(): Promise<void> {
    if (performance.now() - this.since < this.ms) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.signal?.throwIfAborted();
    this.since = performance.now();
  }
}
