import { lowerBound } from '../store/bisect';
import type { SnapshotReader, SnapshotWriter } from '../store/snapshot';

/**
 * Searchable names by how they begin. Every name, alias and acronym is listed under its first
 * significant word, under its first two, and so on up to all of them (significant: legal forms left
 * out, or every word of a name made only of legal forms). In each list the names with no significant
 * word after the ones listed under come first, then those with one more, and so on; within each of
 * those, the most important company first.
 *
 * A query of several words finds here, with one lookup, the companies named by exactly its words
 * ("Borealis Cables", "Borealis Cables Ltd") and then those whose names go on from them ("Borealis
 * Cables Industries"), however many more important companies hold those words elsewhere in their
 * names. Those are the names a relevance search ranks highest, and neither the postings of the words
 * (read most important company first) nor the names most similar by trigrams reach all of them when
 * many names share the words.
 *
 * Layout: the lists are keyed by a 32-bit hash of the word ids; `hashes` holds each distinct hash once,
 * ascending, and entries [start[k], start[k + 1]) are the list of hashes[k]. Two sequences of the same
 * hash share a list, so a reader checks each entry's words ({@link WordIndex.beginsWith}). At a million
 * companies: 5 million listings of 2.9 million names, aliases and acronyms, some 23 MB.
 */
export class LeadLists {
  private constructor(
    private readonly hashes: Uint32Array,
    private readonly start: Uint32Array,
    private readonly entries: Uint32Array,
  ) {}

  /**
   * Lists every entry of `byImportance` (all entries, most important company first) under each
   * beginning of its significant words. `significant(entry, out)` writes the entry's significant word
   * ids into `out` (grown as needed) and returns how many there are. `slice` lets other work run
   * between stretches of a long build.
   */
  static async build(
    byImportance: Uint32Array,
    significant: (entry: number, out: number[]) => number,
    slice: { next(): Promise<void> } = { next: () => Promise.resolve() },
  ): Promise<LeadLists> {
    const ids: number[] = [];
    let total = 0;
    for (let k = 0; k < byImportance.length; k++) {
      if ((k & 16383) === 0) await slice.next();
      total += significant(byImportance[k]!, ids);
    }
    const hash = new Uint32Array(total);
    // Significant words after the beginning listed under, at most 255 (so ties beyond that keep importance order).
    const rest = new Uint8Array(total);
    const entry = new Uint32Array(total);
    let at = 0;
    for (let k = 0; k < byImportance.length; k++) {
      if ((k & 16383) === 0) await slice.next();
      const e = byImportance[k]!;
      const m = significant(e, ids);
      let h = HASH_START;
      for (let length = 1; length <= m; length++) {
        h = hashStep(h, ids[length - 1]!);
        hash[at] = h;
        rest[at] = Math.min(255, m - length);
        entry[at++] = e;
      }
    }
    // Listings were made most important first: three stable counting sorts (fewest words after the
    // beginning, then the hash's low and high halves) order them by hash, then words after, then importance.
    let order: Uint32Array = new Uint32Array(total);
    for (let i = 0; i < total; i++) order[i] = i;
    order = await countingSort(order, rest, 0, 0xff, slice);
    order = await countingSort(order, hash, 0, 0xffff, slice);
    order = await countingSort(order, hash, 16, 0xffff, slice);
    let distinct = 0;
    for (let k = 0; k < total; k++) if (k === 0 || hash[order[k]!] !== hash[order[k - 1]!]) distinct++;
    const hashes = new Uint32Array(distinct);
    const start = new Uint32Array(distinct + 1);
    const entries = new Uint32Array(total);
    let list = -1;
    for (let k = 0; k < total; k++) {
      const i = order[k]!;
      if (k === 0 || hash[i] !== hashes[list]) {
        hashes[++list] = hash[i]!;
        start[list] = k;
      }
      entries[k] = entry[i]!;
    }
    start[distinct] = total;
    return new LeadLists(hashes, start, entries);
  }

  /**
   * The entries listed under the word ids `ids` (a whole beginning of their significant words), in
   * the list's order; entries of another sequence with the same hash may be among them.
   */
  listOf(ids: readonly number[]): Uint32Array {
    if (ids.length === 0) return EMPTY;
    let h = HASH_START;
    for (const id of ids) h = hashStep(h, id);
    const at = lowerBound(this.hashes, h);
    if (at === this.hashes.length || this.hashes[at] !== h) return EMPTY;
    return this.entries.subarray(this.start[at], this.start[at + 1]);
  }

  /** Listings in all (an entry counts once per beginning). */
  get size(): number {
    return this.entries.length;
  }

  writeTo(w: SnapshotWriter): void {
    w.array(this.hashes).array(this.start).array(this.entries);
  }

  static readFrom(r: SnapshotReader): LeadLists {
    return new LeadLists(r.u32(), r.u32(), r.u32());
  }
}

const EMPTY = new Uint32Array(0);

/** FNV-1a over 32-bit word ids, a byte at a time. */
const HASH_START = 0x811c9dc5;

function hashStep(h: number, id: number): number {
  h = Math.imul(h ^ (id & 0xff), 0x01000193);
  h = Math.imul(h ^ ((id >>> 8) & 0xff), 0x01000193);
  h = Math.imul(h ^ ((id >>> 16) & 0xff), 0x01000193);
  return Math.imul(h ^ (id >>> 24), 0x01000193) >>> 0;
}

/**
 * `order` stably sorted by the field `(keys[i] >>> shift) & mask` of each of its listings `i`: the key is
 * read from an array, not through a function, so that the two passes over millions of listings make no
 * call each.
 */
async function countingSort(
  order: Uint32Array,
  keys: Uint8Array | Uint32Array,
  shift: number,
  mask: number,
  slice: { next(): Promise<void> },
): Promise<Uint32Array> {
  const count = new Uint32Array(mask + 2);
  for (let k = 0; k < order.length; k++) count[((keys[order[k]!]! >>> shift) & mask) + 1]!++;
  for (let v = 1; v <= mask + 1; v++) count[v]! += count[v - 1]!;
  await slice.next();
  const out = new Uint32Array(order.length);
  for (let k = 0; k < order.length; k++) {
    if ((k & 262143) === 0) await slice.next();
    const i = order[k]!;
    out[count[(keys[i]! >>> shift) & mask]!++] = i;
  }
  return out;
}
