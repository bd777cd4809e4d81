import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createWhole } from './store/file-io';

/**
 * A secret kept in `<dataDir>/<name>`: read when present, else generated once
 * (32 random bytes) and written readable by the owner only, so links and
 * signatures stay valid across restarts without any setting. The file appears
 * whole (written aside, then linked into place), and of two processes making it
 * at once both keep the one that got there first. An empty file is refused rather
 * than used: anyone could sign with an empty secret.
 */
export function loadOrCreateSecret(dataDir: string, name: string): string {
  const file = path.join(dataDir, name);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    createWhole(file, `${crypto.randomBytes(32).toString('base64url')}\n`);
  }
  const secret = fs.readFileSync(file, 'utf8').trim();
  if (secret === '')
    throw new Error(`${file} is empty: remove it to have a secret made, or write one into it`);
  return secret;
}
