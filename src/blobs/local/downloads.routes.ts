import { Router } from 'express';
import type { LocalBlobStore } from './local.blob-store';
import { DOWNLOAD_PREFIX } from './local.blob-store';

/** Serves signed download links of the local blob store; the signature is the credential, no API key. */
export function downloadsRoutes(store: LocalBlobStore): Router {
  const r = Router();
  r.get(`${DOWNLOAD_PREFIX}*key`, (req, res) => {
    const raw = (req.params as { key?: string | string[] }).key;
    const key = Array.isArray(raw) ? raw.join('/') : (raw ?? '');
    const file = store.verify(key, req.query.expires, req.query.signature);
    res.setHeader('Cache-Control', 'private, no-store');
    res.download(file, key.split('/').pop() ?? 'export.csv');
  });
  return r;
}
