import { LEGAL_FORMS, significantWords, wordsOf } from './name-words';
import type { WordIndex } from './word-index';

/**
 * Relevance: how well a query matches a company's best name (name, alias or acronym) and how important
 * the company is. All parts are in [0, 1] except the exact-name bonus.
 *
 *   relevance  = 0.5 * match + 0.1 * word_similarity + 0.1 * search_similarity + 0.3 * importance
 *   match      = 0.8 * coverage + 0.1 * precision + 0.05 * first + 0.05 * legal + 0.15 * exact
 *   importance = 0.8 * ln(1 + relationships) / ln(1 + most relationships of any company)
 *              + 0.2 * (1 if the company is the parent of a cluster of several companies)
 *
 * - coverage: the mean over the query's words (legal forms left out) of how each meets a word of the
 *   name (legal forms left out): 1 for the same word, 0.5 + 0.5 * (query word length / name word length)
 *   when the query word begins the name word, 0.7 for a typo (see WordIndex.typoWords), else 0;
 * - precision: the share of the name's words that a query word met;
 * - first: the query's first word met the name's first word;
 * - legal: the query names legal forms and the name has all of them;
 * - exact: the query's words are the name's words, legal forms included;
 * - word_similarity is pg_trgm's word_similarity(query, matched name), search_similarity pg_trgm's
 *   similarity(query, name).
 * Importance weighs enough that a query naming a famous company by its short name ("bosch", "samsung")
 * finds the group rather than a small namesake, but not enough to beat a name that matches better
 * word for word.
 */
export const RELEVANCE_FORMULA =
  'relevance = 0.5 * match + 0.1 * word_similarity + 0.1 * search_similarity + 0.3 * importance; ' +
  'match = 0.8 * coverage + 0.1 * precision + 0.05 * first-word match + 0.05 * legal forms agree + 0.15 * same words; ' +
  'coverage = mean over the query words (legal forms such as Co, Ltd, Inc, GmbH, SA, AG, PLC, Corp ignored) of 1 for the same word in the name, ' +
  '0.5 + 0.5 * length ratio when it begins a word of the name, 0.7 for a typo (one letter missing, extra, changed or swapped; two in words of 9+ letters), else 0; ' +
  'importance = 0.8 * ln(1 + relationships) / ln(1 + most relationships) + 0.2 if the company is the parent of a cluster. ' +
  "Names, aliases and acronyms of the names' significant words (Taiwan Semiconductor Manufacturing Co: TSMC) are all matched; matched_name says which.";

/** A query prepared once for scoring many names. */
export interface QueryPlan {
  text: string;
  /** All folded words of the query. */
  words: string[];
  /** Folded words without legal forms (all words if only legal forms were typed). */
  significant: string[];
  /** Whether the query is made only of legal forms (then legal forms in names count too). */
  onlyLegal: boolean;
  legal: string[];
  /** Vocabulary id of each significant word, -1 when no name has it. */
  exactIds: number[];
  /** Vocabulary ids [from, to) of the words each significant word begins (itself included). */
  prefixFrom: number[];
  prefixTo: number[];
  /** Vocabulary id of each of all the words, -1 when no name has it. */
  wordIds: number[];
  /** Vocabulary ids of the legal forms typed (-1 for one no name has). */
  legalIds: number[];
  /** Vocabulary ids each significant word may be a typo of. */
  typos: Set<number>[];
  /** Per significant word, bit (id % 32) set for each of its typo ids: a clear bit needs no lookup. */
  typoBits: number[];
}

/**
 * `typing`: the query is being typed, so a last word that begins some name word is taken as such a
 * beginning and not looked up as a typo (the lookup is the costly part of a suggestion).
 */
export function planQuery(text: string, words: WordIndex, typing = false): QueryPlan {
  const all = wordsOf(text);
  const significant = significantWords(all);
  const last = significant.length - 1;
  const typosOf = (w: string, i: number) => {
    if (typing && i === last) {
      const [from, to] = words.prefixRange(w);
      if (to > from) return new Set<number>();
    }
    return new Set(words.typoWords(w));
  };
  const onlyLegal = significant.length > 0 && significant.every((w) => LEGAL_FORMS.has(w));
  const ranges = significant.map((w) => words.prefixRange(w));
  const typos = significant.map(typosOf);
  const legal = onlyLegal ? [] : all.filter((w) => LEGAL_FORMS.has(w));
  return {
    text,
    words: all,
    significant,
    onlyLegal,
    legal,
    exactIds: significant.map((w) => words.idOf(w)),
    prefixFrom: ranges.map((r) => r[0]),
    prefixTo: ranges.map((r) => r[1]),
    wordIds: all.map((w) => words.idOf(w)),
    legalIds: legal.map((w) => words.idOf(w)),
    typos,
    typoBits: typos.map((ids) => {
      let bits = 0;
      for (const id of ids) bits |= 1 << (id & 31);
      return bits;
    }),
  };
}

export interface EntryMatch {
  match: number;
  coverage: number;
}

/**
 * How well the query matches one name, alias or acronym (see the formula above). Run for hundreds of
 * candidates per search, so it works on vocabulary ids only: the vocabulary is sorted, so the words a
 * query word begins are one id range, and legal forms are flagged per id.
 */
export function matchEntry(plan: QueryPlan, words: WordIndex, entry: number): EntryMatch {
  const ids = words.entryWords;
  const start = words.wordStart[entry]!;
  const n = words.wordStart[entry + 1]! - start;
  if (scratch.length < n) scratch = new Uint8Array(2 * n);
  // scratch[p]: bit 0 set when the entry's word p counts (not a legal form, unless only legal forms
  // count), bit 1 once a query word met it.
  const flags = scratch;
  let considered = 0;
  let firstPos = -1;
  for (let p = 0; p < n; p++) {
    const counts = plan.onlyLegal || !words.isLegal(ids[start + p]!);
    flags[p] = counts ? 1 : 0;
    if (counts) {
      considered++;
      if (firstPos < 0) firstPos = p;
    }
  }
  // A name of legal forms only is matched on all its words.
  if (considered === 0) {
    considered = n;
    firstPos = 0;
    flags.fill(1, 0, n);
  }
  let metCount = 0;
  let total = 0;
  let first = 0;
  const q = plan.significant;
  for (let i = 0; i < q.length; i++) {
    const exactId = plan.exactIds[i]!;
    const from = plan.prefixFrom[i]!;
    const to = plan.prefixTo[i]!;
    const qLength = q[i]!.length;
    const typos = plan.typos[i]!;
    const typoBits = plan.typoBits[i]!;
    let best = 0;
    let at = -1;
    for (let p = 0; p < n; p++) {
      if ((flags[p]! & 1) === 0) continue;
      const id = ids[start + p]!;
      let score = 0;
      if (id === exactId) score = 1;
      else if (id >= from && id < to) score = 0.5 + (0.5 * qLength) / words.wordLength(id);
      else if ((typoBits & (1 << (id & 31))) !== 0 && typos.has(id)) score = 0.7;
      if (score > best) {
        best = score;
        at = p;
      }
    }
    total += best;
    if (at >= 0 && (flags[at]! & 2) === 0) {
      flags[at]! |= 2;
      metCount++;
    }
    if (i === 0 && at >= 0 && at === firstPos) first = 1;
  }
  const coverage = q.length === 0 ? 0 : total / q.length;
  const precision = metCount / considered;
  let legal = plan.legalIds.length > 0 ? 1 : 0;
  for (const id of plan.legalIds) {
    if (id < 0 || !words.entryHolds(entry, id)) {
      legal = 0;
      break;
    }
  }
  let exact = n === plan.wordIds.length ? 1 : 0;
  for (let k = 0; exact === 1 && k < n; k++) if (ids[start + k] !== plan.wordIds[k]) exact = 0;
  return {
    match: 0.8 * coverage + 0.1 * precision + 0.05 * first + 0.05 * legal + 0.15 * exact,
    coverage,
  };
}

/** Per-word flags of the entry matchEntry is scoring; searches run one at a time, so one buffer serves. */
let scratch = new Uint8Array(64);

/** The importance part of relevance, in [0, 1]. */
export function importanceOf(degree: number, maxDegree: number, isClusterParent: boolean): number {
  const spread = maxDegree > 0 ? Math.log1p(degree) / Math.log1p(maxDegree) : 0;
  return 0.8 * spread + (isClusterParent ? 0.2 : 0);
}

export function relevanceOf(match: number, wordSim: number, sim: number, importance: number): number {
  return 0.5 * match + 0.1 * wordSim + 0.1 * sim + 0.3 * importance;
}
