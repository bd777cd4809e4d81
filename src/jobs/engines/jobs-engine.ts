import type { AgendaBackend } from 'agenda';
import type { RunStore } from '../run-store';

/**
 * What one engine folder provides: Agenda's backend for the queue and the run
 * store for what clients poll, over one connection (one SQLite file, one pool,
 * one client) so jobs and run records live in the same database.
 */
export interface JobsEngine {
  agendaBackend: AgendaBackend;
  runs: RunStore;
  /**
   * Connects, for an engine with a server: a server that does not answer fails the start here,
   * with its own reason, before Agenda has begun anything that would fail later on its own.
   */
  open?(): Promise<void>;
  /** Closes the connection the Agenda backend and the run store share. */
  close(): Promise<void>;
}
