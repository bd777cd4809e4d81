/**
 * Separator of list elements inside one CSV field, the same in import files and
 * in exports, so that an exported file's lists read back as the import reads
 * them. Imported elements never hold it (the import splits on it).
 */
export const LIST_SEPARATOR = '|';

/** A list as one CSV field: its elements joined by LIST_SEPARATOR; an empty list is an empty field. */
export function listField(xs: readonly string[]): string {
  return xs.join(LIST_SEPARATOR);
}
