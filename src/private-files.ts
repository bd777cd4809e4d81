import fs from 'node:fs';
import path from 'node:path';

/**
 * Files holding callers' data or secrets are this account's only: 0600 files in 0700 folders. A mode
 * given when a file is made applies to new files only, so files an older version left readable to all
 * are set again; where the account may not change a mode (EPERM: a volume it does not own), they stay
 * as they are rather than stop the service.
 */
export function makePrivate(file: string, mode: 0o600 | 0o700): void {
  try {
    fs.chmodSync(file, mode);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') throw e;
  }
}

/** Writes `text` to `file` for this account only, its folder made (0700) when missing. */
export function writePrivateFile(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, text, { mode: 0o600 });
  makePrivate(file, 0o600);
}
