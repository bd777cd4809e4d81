import { Neo4jError } from 'neo4j-driver';
import type { Driver } from 'neo4j-driver';
import { utcDateTime } from '../../src/store/neo4j/driver';

/** One transaction the adapter ran: its label, access mode, text and driver parameters. */
export interface RecordedRun {
  query: string;
  mode: string;
  database: string;
  text: string;
  params: Record<string, unknown>;
  timeout?: number;
}

/** Answers a query (by its label) with rows, or throws to simulate a driver failure. */
export type Responder = (run: RecordedRun) => Record<string, unknown>[];

function record(row: Record<string, unknown>) {
  const keys = Object.keys(row);
  return { keys, get: (k: string) => row[k] };
}

/**
 * A stand-in for neo4j-driver's Driver with the surface the executor uses
 * (sessions with executeRead/executeWrite/beginTransaction/run). It records every
 * transaction, answers from `respond`, and counts sessions opened and closed, so
 * adapter behaviour (parameters, access modes, labels, cleanup) is checked without
 * a server.
 */
export class FakeNeo4jDriver {
  readonly runs: RecordedRun[] = [];
  /** The configuration of every session opened, in order. */
  readonly sessions: Record<string, unknown>[] = [];
  opened = 0;
  closed = 0;

  constructor(private readonly respond: Responder) {}

  asDriver(): Driver {
    return this as unknown as Driver;
  }

  getServerInfo(): Promise<{ address: string }> {
    return Promise.resolve({ address: 'fake:7687' });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  session(config: { database: string; defaultAccessMode: string }) {
    this.opened++;
    this.sessions.push(config);
    const runOne = (
      text: string,
      params: Record<string, unknown>,
      tx: { metadata?: { query?: string }; timeout?: number },
    ) => {
      const run: RecordedRun = {
        query: tx.metadata?.query ?? '',
        mode: config.defaultAccessMode,
        database: config.database,
        text,
        params,
        timeout: tx.timeout,
      };
      this.runs.push(run);
      return this.respond(run).map(record);
    };
    const managed = (txConfig: { metadata?: { query?: string }; timeout?: number }) => ({
      run: (text: string, params: Record<string, unknown>) =>
        Promise.resolve({ records: runOne(text, params, txConfig) }),
    });
    return {
      executeRead: <T>(work: (tx: unknown) => Promise<T>, txConfig: { metadata?: { query?: string } }) =>
        work(managed(txConfig)),
      executeWrite: <T>(work: (tx: unknown) => Promise<T>, txConfig: { metadata?: { query?: string } }) =>
        work(managed(txConfig)),
      run: (text: string, params: Record<string, unknown>, txConfig: { metadata?: { query?: string } }) =>
        Promise.resolve({ records: runOne(text, params, txConfig) }),
      beginTransaction: (txConfig: { metadata?: { query?: string }; timeout?: number }) => {
        let open = true;
        return Promise.resolve({
          run: (text: string, params: Record<string, unknown>) => {
            const records = runOne(text, params, txConfig);
            return {
              async *[Symbol.asyncIterator]() {
                for (const r of records) yield await Promise.resolve(r);
              },
            };
          },
          commit: () => {
            open = false;
            return Promise.resolve();
          },
          rollback: () => {
            open = false;
            return Promise.resolve();
          },
          isOpen: () => open,
        });
      },
      close: () => {
        this.closed++;
        return Promise.resolve();
      },
    };
  }
}

/** A driver error as neo4j-driver raises it. */
export function driverError(message: string, code: string): Error {
  return new Neo4jError(message, code, '50N42', 'general processing exception');
}

/** A DATETIME as the driver returns it (UTC offset). */
export function driverDateTime(iso: string): unknown {
  return utcDateTime(new Date(iso));
}
