import { MongoBackend } from '@agendajs/mongo-backend';
import { MongoClient } from 'mongodb';
import type { JobsEngine } from '../jobs-engine';
import { MongoRunStore } from './mongodb.run-store';

/** Jobs and runs in the database the URI names, one client for both. */
export function openMongodbJobsEngine(uri: string): JobsEngine {
  const client = new MongoClient(uri);
  const db = client.db();
  return {
    agendaBackend: new MongoBackend({ mongo: db, collection: 'tiergraph_jobs' }),
    runs: new MongoRunStore({ db }),
    close: () => client.close(),
  };
}
