/**
 * Words of company names as the relevance ranking compares them: accents and case folded, split on
 * anything that is not a letter or digit. Legal forms are recognised so that matching can ignore them
 * ("Robert Bosch GmbH" is "robert bosch" to a query) while still using them to break near ties.
 */

/** Legal-form and registration words, folded; a name made only of these keeps them as its words. */
export const LEGAL_FORMS: ReadonlySet<string> = new Set([
  'co',
  'company',
  'companies',
  'corp',
  'corporation',
  'inc',
  'incorporated',
  'ltd',
  'limited',
  'llc',
  'llp',
  'lp',
  'plc',
  'gmbh',
  'mbh',
  'ag',
  'kg',
  'kgaa',
  'ohg',
  'ug',
  'se',
  'sa',
  'sas',
  'sarl',
  'spa',
  'srl',
  'sl',
  'sau',
  'nv',
  'bv',
  'cv',
  'ab',
  'as',
  'asa',
  'aps',
  'oy',
  'oyj',
  'kk',
  'pty',
  'pte',
  'bhd',
  'sdn',
  'tbk',
  'jsc',
  'pjsc',
  'ojsc',
  'oao',
  'ooo',
  'pao',
  'zao',
  'sro',
  'spzoo',
  'zoo',
  'doo',
  'ad',
  'lda',
  'ltda',
  'sab',
  'de',
]);

/** Words left out of acronyms as well as legal forms: "Bank of America" is BOA as often as BA, so both. */
const LINK_WORDS: ReadonlySet<string> = new Set([
  'of',
  'and',
  'the',
  'for',
  'und',
  'et',
  'der',
  'la',
  'le',
  'du',
  'des',
]);

/** Folded words of a text, in order. */
export function wordsOf(text: string): string[] {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '');
}

/** The words that identify a company: the words without legal forms (all of them if nothing is left). */
export function significantWords(words: readonly string[]): string[] {
  const kept = words.filter((w) => !LEGAL_FORMS.has(w));
  return kept.length > 0 ? kept : [...words];
}

/**
 * Acronyms a name is commonly known by, folded: the initials of its significant words (International
 * Business Machines Corp → ibm), the same with the first legal form that follows them (Taiwan
 * Semiconductor Manufacturing Co → tsmc), and, when link words such as "of" sit between them, the
 * initials with those too (Bank of America → boa). Only for names of two or more significant words;
 * an acronym equal to a word of the name adds nothing and is left out.
 */
export function acronymsOf(words: readonly string[]): string[] {
  const significant: string[] = [];
  const withLinks: string[] = [];
  let legalAfter: string | undefined;
  for (const w of words) {
    if (LEGAL_FORMS.has(w)) {
      if (significant.length > 0 && legalAfter === undefined) legalAfter = w;
      continue;
    }
    if (legalAfter !== undefined) break;
    withLinks.push(w);
    if (!LINK_WORDS.has(w)) significant.push(w);
  }
  if (significant.length < 2) return [];
  const initials = (list: readonly string[]) => list.map((w) => [...w][0]!).join('');
  const out = new Set<string>([initials(significant)]);
  if (legalAfter !== undefined) out.add(initials(significant) + [...legalAfter][0]!);
  if (withLinks.length !== significant.length) out.add(initials(withLinks));
  for (const w of words) out.delete(w);
  return [...out];
}

/**
 * Optimal string alignment distance (Levenshtein plus swaps of neighbours), giving up with max + 1 once
 * the distance must exceed `max`: typo tolerance needs only "at most one or two edits".
 */
export function editDistanceWithin(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const n = b.length;
  let prev2 = new Array<number>(n + 1).fill(0);
  let prev = Array.from({ length: n + 1 }, (_, j) => j);
  let cur = new Array<number>(n + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let rowMin = i;
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, prev2[j - 2]! + 1);
      cur[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > max) return max + 1;
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return Math.min(prev[n]!, max + 1);
}

/** Edits a query word of this length may be away from a name word: none below 5 letters. */
export function allowedEdits(length: number): number {
  return length >= 9 ? 2 : length >= 5 ? 1 : 0;
}
