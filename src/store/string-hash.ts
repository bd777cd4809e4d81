/**
 * FNV-1a over a text's UTF-16 code units, as an unsigned 32-bit number: the hash of the
 * open-addressing tables and sorted indexes that look companies up by vid (search index,
 * walk memory, point-read file). Saved tables depend on it: changing it is a layout change
 * for each of them.
 */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
