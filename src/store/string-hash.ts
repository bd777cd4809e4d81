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

/** fnv1a of the text of `bytes[start, end)` (UTF-8), without decoding it when it is ASCII. */
export function hashOfBytes(bytes: Buffer, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) {
    const c = bytes[i]!;
    // A code unit of the text is a byte only for ASCII; otherwise the text is decoded.
    if (c >= 0x80) return fnv1a(bytes.toString('utf8', start, end));
    h = Math.imul(h ^ c, 0x01000193);
  }
  return h >>> 0;
}
