import { MongoBackend } from '@agendajs/mongo-backend';
import { MongoClient } from 'mongodb';
import { withoutCredentials } from '../../../domain/hosts';
import type { JobsEngine } from '../jobs-engine';
import { MongoRunStore } from './mongodb.run-store';
import { unavailableWhenUnreachable } from '../unreachable';

/** Failures of the driver that mean the server cannot be reached (or no longer can). */
const UNREACHABLE = new Set([
  'MongoServerSelectionError',
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoTopologyClosedError',
  'MongoNotConnectedError',
  // A replica set's failover: the pool of the server that stepped down is cleared under the operation.
  'MongoPoolClearedError',
]);

/**
 * How long an operation waits for a server to answer before it fails: the driver's own default is
 * 30 s, for which a client polling its run would hang. A URI that sets it is followed.
 */
const SERVER_SELECTION_MS = 5000;

/** Jobs and runs in the database the URI names, one client for both. */
export function openMongodbJobsEngine(uri: string): JobsEngine {
  const client = new MongoClient(
    uri,
    /serverSelectionTimeoutMS=/i.test(uri) ? {} : { serverSelectionTimeoutMS: SERVER_SELECTION_MS },
  );
  const db = client.db();
  return {
    agendaBackend: new MongoBackend({ mongo: db, collection: 'tiergraph_jobs' }),
    runs: unavailableWhenUnreachable(
      new MongoRunStore({ db }),
      (e) => e instanceof Error && UNREACHABLE.has(e.name),
    ),
    open: async () => {
      try {
        await client.connect();
      } catch (e) {
        throw new Error(
          `MongoDB (JOBS_BACKEND=mongodb) does not answer at ${withoutCredentials(uri)}: ${(e as Error).message}`,
          {
            cause: e,
          },
        );
      }
    },
    close: () => client.close(),
  };
}
