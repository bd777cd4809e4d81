import type { AgendaBackend, JobParameters } from 'agenda';
import type { Logger } from '../logger';

/**
 * The backend with an `unlockJob` that never fails. Agenda calls it without waiting for it (a job
 * locked beyond a lock limit, or due too far ahead, is let go), so a database that fails just then
 * (gone, or closed by a shutdown) would end the process with an unhandled rejection. A release that
 * fails costs nothing lasting: the lock lapses after the job's lock lifetime, and the job is taken
 * again.
 */
export function withSettledUnlocks(backend: AgendaBackend, log: Logger): AgendaBackend {
  const repository = backend.repository;
  const unlockJob = async (job: JobParameters): Promise<void> => {
    try {
      await repository.unlockJob(job);
    } catch (e) {
      log.warn({ err: e, job: job.name }, 'a job lock was not released; it lapses on its own');
    }
  };
  const settled = replacing(repository, 'unlockJob', unlockJob);
  return replacing(backend, 'repository', settled);
}

/** `target` with one member replaced; its methods still run on `target` itself. */
function replacing<T extends object>(target: T, member: keyof T, value: unknown): T {
  return new Proxy(target, {
    get: (t, name) => {
      if (name === member) return value;
      const own = Reflect.get(t, name) as unknown;
      return typeof own === 'function' ? (own as (...a: unknown[]) => unknown).bind(t) : own;
    },
  });
}
