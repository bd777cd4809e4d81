import type { BlobStore } from '../blobs/blob-store';
import type { Config } from '../config/env';
import { parseCallbackHosts } from '../domain/callback-hosts';
import { isPublicAddress } from '../domain/public-address';
import type { Limits } from '../domain/params';
import type { Logger } from '../logger';
import { loadOrCreateSecret } from '../secrets';
import type { TierViewService } from '../services/tierview.service';
import type { GraphStore } from '../store/graph-store';
import { CallbackSender } from './callbacks';
import type { JobsEngine } from './engines/jobs-engine';
import type { JobQueueOptions } from './job-queue';

/** Where a server keeps the callback secret it generated, when CALLBACK_SECRET is unset. */
export const CALLBACK_SECRET_FILE = 'callback-secret';

/** The secret a server signs callbacks with: CALLBACK_SECRET, or the one generated once under DATA_DIR. */
export function serverCallbackSecret(config: Pick<Config, 'CALLBACK_SECRET' | 'dataDir'>): string {
  return config.CALLBACK_SECRET ?? loadOrCreateSecret(config.dataDir, CALLBACK_SECRET_FILE);
}

/** The settings the queue reads; everything else it is handed. */
export type JobQueueConfig = Pick<
  Config,
  | 'dataDir'
  | 'JOBS_WORKER'
  | 'JOBS_BACKEND'
  | 'JOBS_CONCURRENCY'
  | 'JOBS_MAX_QUEUED_PER_KEY'
  | 'JOB_TIMEOUT_S'
  | 'JOB_LOCK_S'
  | 'JOBS_POLL_MS'
  | 'MAX_TIERS'
  | 'DOWNLOAD_TTL_S'
  | 'EXPORT_RETENTION_S'
  | 'CALLBACK_HOSTS'
  | 'CALLBACK_ALLOW_HTTP'
  | 'CALLBACK_PUBLIC_ONLY'
  | 'CALLBACK_SECRET'
  | 'CALLBACK_MAX_ATTEMPTS'
  | 'CALLBACK_RETRY_BASE_S'
  | 'CALLBACK_RETRY_MAX_S'
>;

/** What the queue works with that is not a setting. */
export interface JobQueueParts {
  engine: JobsEngine;
  store: GraphStore;
  blobs: BlobStore;
  tierview: TierViewService;
  log: Logger;
  limits?: Limits;
  /** Whether the API key of this id is revoked (the server's key store). */
  revokedKey?: (keyId: string) => boolean;
}

/**
 * The queue's options from the validated configuration: the one place that maps
 * settings to the queue, so a new setting is wired once for the server and tests.
 * Callbacks get a sender only when some host is allowed; the signing secret is
 * created on first use when none is configured.
 */
export function jobQueueOptions(config: JobQueueConfig, parts: JobQueueParts): JobQueueOptions {
  const rules = parseCallbackHosts(config.CALLBACK_HOSTS);
  return {
    agendaBackend: parts.engine.agendaBackend,
    runs: parts.engine.runs,
    store: parts.store,
    blobs: parts.blobs,
    tierview: parts.tierview,
    log: parts.log,
    limits: parts.limits,
    revokedKey: parts.revokedKey,
    worker: config.JOBS_WORKER,
    shared: config.JOBS_BACKEND !== 'embedded',
    concurrency: config.JOBS_CONCURRENCY,
    maxActivePerKey: config.JOBS_MAX_QUEUED_PER_KEY,
    timeoutS: config.JOB_TIMEOUT_S,
    lockS: config.JOB_LOCK_S,
    pollMs: config.JOBS_POLL_MS,
    maxTiers: config.MAX_TIERS,
    downloadTtlS: config.DOWNLOAD_TTL_S,
    retentionS: config.EXPORT_RETENTION_S,
    callbacks: {
      rules,
      allowHttp: config.CALLBACK_ALLOW_HTTP,
      publicOnly: config.CALLBACK_PUBLIC_ONLY,
      sender:
        rules.length > 0
          ? new CallbackSender({
              secret: serverCallbackSecret(config),
              maxAttempts: config.CALLBACK_MAX_ATTEMPTS,
              baseDelayMs: config.CALLBACK_RETRY_BASE_S * 1000,
              maxDelayMs: config.CALLBACK_RETRY_MAX_S * 1000,
              ...(config.CALLBACK_PUBLIC_ONLY ? { addresses: isPublicAddress } : {}),
            })
          : null,
    },
  };
}
