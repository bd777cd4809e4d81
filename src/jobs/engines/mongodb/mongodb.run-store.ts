import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient } from 'mongodb';
import type { Collection, Db, Filter } from 'mongodb';
import type { TierViewRequest } from '../../../domain/tierview';
import {
  ENDED_STATES,
  RunKeyTaken,
  RunQuotaExceeded,
  fromRunDocument,
  newRunRecord,
  toPatchDocument,
  toRunDocument,
} from '../../run-store';
import type {
  CreateOptions,
  LifeCycleState,
  RunDocument,
  RunPatch,
  RunRecord,
  RunStore,
  TransitionGuard,
} from '../../run-store';

/** Where the store connects: a database the caller owns (and closes), or a URL it opens itself. */
export type MongoRunStoreOptions = ({ db: Db } | { url: string; dbName?: string }) & {
  /** Collection of run records (default `tiergraph_runs`). */
  collectionName?: string;
  /** Collection holding the id counter (default `tiergraph_counters`). */
  countersCollectionName?: string;
};

/** A run as stored: the document form of the record, keyed by its id. */
type StoredRun = RunDocument & { _id: number };
interface Counter {
  _id: string;
  seq: number;
}
/** A setting kept beside the counter (the run id key). */
interface Setting {
  _id: string;
  value: string;
}
/** Held by the create of one owner while it counts and inserts under a quota. */
interface OwnerLock {
  _id: string;
  token: string;
  expiresAt: Date;
}

const COUNTER_ID = 'run_id';
const RUN_ID_KEY_ID = 'run_id_key';
const DUPLICATE_KEY = 11000;
/** Draws of a run id before create gives up (only a non-atomic counter needs more than one). */
const MAX_ID_DRAWS = 20;
/** How long an owner's create lock is honoured; one count and one insert take milliseconds. */
const LOCK_LEASE_MS = 5_000;
/** How long a create waits for its owner's lock (a lapsed one is cleared well before). */
const LOCK_WAIT_MS = 15_000;

function fromStored(doc: StoredRun): RunRecord {
  const { _id: _ignored, ...rest } = doc;
  return fromRunDocument(rest);
}

/**
 * Run records in MongoDB, in the same database as Agenda's jobs when
 * `JOBS_BACKEND=mongodb`. Ids come from a counter document incremented with an
 * upsert: the increment is atomic, and the counter only ever grows, so an id is
 * never handed out twice even after the run holding it is deleted. A transition is
 * one findOneAndUpdate whose filter includes the allowed states, so the check and
 * the write cannot be split by another writer.
 */
export class MongoRunStore implements RunStore {
  readonly name = 'mongodb';
  private readonly client: MongoClient | null;
  private readonly db: Db;
  private readonly runs: Collection<StoredRun>;
  private readonly counters: Collection<Counter>;
  private readonly locks: Collection<OwnerLock>;
  private readonly settings: Collection<Setting>;

  constructor(options: MongoRunStoreOptions) {
    if ('db' in options) {
      this.client = null;
      this.db = options.db;
    } else {
      // The driver connects on first use (or explicitly in open()); constructing opens nothing.
      this.client = new MongoClient(options.url);
      this.db = this.client.db(options.dbName);
    }
    this.runs = this.db.collection<StoredRun>(options.collectionName ?? 'tiergraph_runs');
    this.counters = this.db.collection<Counter>(options.countersCollectionName ?? 'tiergraph_counters');
    // Lock documents live beside the counter, under ids of their own.
    this.locks = this.db.collection<OwnerLock>(options.countersCollectionName ?? 'tiergraph_counters');
    this.settings = this.db.collection<Setting>(options.countersCollectionName ?? 'tiergraph_counters');
  }

  async open(): Promise<void> {
    if (this.client) await this.client.connect();
    // Serves both counts: runs in a state, and PENDING runs below an id.
    await this.runs.createIndex({ lifeCycleState: 1, _id: 1 }, { name: 'life_cycle_state_run_id' });
    await this.runs.createIndex({ ownerKeyId: 1, _id: -1 }, { name: 'owner_key_id_run_id' });
    await this.runs.createIndex({ callbackDue: 1, _id: 1 }, { name: 'callback_due_run_id' });
    // Not unique: keyed creates of one owner take turns under its lock (see create), which also
    // serves servers without partial indexes.
    await this.runs.createIndex(
      { ownerKeyId: 1, idempotencyKey: 1 },
      { name: 'owner_key_id_idempotency_key' },
    );
    // The counter exists before the first create, so concurrent first creates all
    // increment one document instead of racing to insert it. Two stores opening at
    // once may both try the insert; the loser's duplicate-key error means it exists.
    try {
      await this.counters.updateOne({ _id: COUNTER_ID }, { $setOnInsert: { seq: 0 } }, { upsert: true });
    } catch (err) {
      if ((err as { code?: unknown }).code !== DUPLICATE_KEY) throw err;
    }
  }

  async close(): Promise<void> {
    if (this.client) await this.client.close();
  }

  /**
   * A document has no count-and-insert in one step without a transaction (which
   * needs a replica set), so creates of one owner under a quota take turns: each
   * holds a lock document (its primary key makes the insert of it atomic, on
   * MongoDB and on the wire-compatible servers alike) while it counts and inserts.
   * A lock left by a crashed process lapses after LOCK_LEASE_MS. Creates under an
   * idempotency key take the same turns, so the key's lookup and the insert are one step.
   */
  async create(request: TierViewRequest, now: Date, options: CreateOptions = {}): Promise<RunRecord> {
    const owner = options.ownerKeyId ?? null;
    const key = options.idempotencyKey ?? null;
    const max = options.maxActive;
    if (max === undefined && key === null) return this.insertNew(request, now, owner, null);
    const active: Filter<StoredRun> = {
      ownerKeyId: owner,
      lifeCycleState: { $in: ['PENDING', 'RUNNING'] satisfies LifeCycleState[] },
    };
    return this.withOwnerLock(owner, async () => {
      if (key !== null) {
        const taken = await this.runs.findOne({ ownerKeyId: owner, idempotencyKey: key });
        if (taken) throw new RunKeyTaken(fromStored(taken));
      }
      if (max !== undefined && (await this.runs.countDocuments(active)) >= max)
        throw new RunQuotaExceeded(max);
      return this.insertNew(request, now, owner, key);
    });
  }

  private async withOwnerLock<T>(owner: string | null, work: () => Promise<T>): Promise<T> {
    const _id = `quota-lock:${owner ?? ''}`;
    const token = randomUUID();
    const giveUpAt = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        await this.locks.insertOne({ _id, token, expiresAt: new Date(Date.now() + LOCK_LEASE_MS) });
        break;
      } catch (err) {
        if ((err as { code?: unknown }).code !== DUPLICATE_KEY) throw err;
      }
      // Taken: clear it if its holder died, else wait a little and try again.
      await this.locks.deleteOne({ _id, expiresAt: { $lt: new Date() } });
      if (Date.now() > giveUpAt)
        throw new Error(`run quota lock for ${owner ?? 'unowned runs'} still held after ${LOCK_WAIT_MS} ms`);
      await sleep(2 + Math.floor(Math.random() * 8));
    }
    try {
      return await work();
    } finally {
      await this.locks.deleteOne({ _id, token });
    }
  }

  /**
   * MongoDB returns the value of its own atomic increment, so an id is taken at most
   * once. Wire-compatible servers may not: mongo-java-server replies with the live
   * document after a concurrent increment, FerretDB 1.x reads and then writes. Two
   * callers can then get one id; the run's primary key refuses the second insert,
   * and that caller draws again.
   */
  private async insertNew(
    request: TierViewRequest,
    now: Date,
    owner: string | null,
    key: string | null,
  ): Promise<RunRecord> {
    for (let attempt = 1; ; attempt++) {
      const counter = await this.counters.findOneAndUpdate(
        { _id: COUNTER_ID },
        { $inc: { seq: 1 } },
        { upsert: true, returnDocument: 'after' },
      );
      if (!counter) throw new Error('run id counter upsert returned no document');
      const record = newRunRecord(counter.seq, request, now, owner, key);
      try {
        await this.runs.insertOne({ _id: record.runId, ...toRunDocument(record) });
        return record;
      } catch (err) {
        if ((err as { code?: unknown }).code !== DUPLICATE_KEY || attempt >= MAX_ID_DRAWS) throw err;
      }
    }
  }

  async get(runId: number): Promise<RunRecord | null> {
    const doc = await this.runs.findOne({ _id: runId });
    return doc ? fromStored(doc) : null;
  }

  async transition(
    runId: number,
    from: readonly LifeCycleState[],
    patch: RunPatch,
    now: Date,
    guard?: TransitionGuard,
  ): Promise<RunRecord | null> {
    // A record stored before attempt ids existed has no field, which matches null.
    const doc = await this.runs.findOneAndUpdate(
      {
        _id: runId,
        lifeCycleState: { $in: [...from] },
        ...(guard ? { attemptId: guard.attemptId } : {}),
        ...(guard?.uncanceled ? { cancelRequested: { $ne: true } } : {}),
      },
      { $set: toPatchDocument(patch, now) },
      { returnDocument: 'after' },
    );
    return doc ? fromStored(doc) : null;
  }

  async listByOwner(ownerKeyId: string, limit: number, offset: number): Promise<RunRecord[]> {
    const docs = await this.runs.find({ ownerKeyId }).sort({ _id: -1 }).skip(offset).limit(limit).toArray();
    return docs.map(fromStored);
  }

  async countPendingBefore(runId: number): Promise<number> {
    return this.runs.countDocuments({ lifeCycleState: 'PENDING', _id: { $lt: runId } });
  }

  async countInState(state: LifeCycleState): Promise<number> {
    return this.runs.countDocuments({ lifeCycleState: state });
  }

  async runIdKey(candidate: string): Promise<string> {
    try {
      await this.settings.updateOne(
        { _id: RUN_ID_KEY_ID },
        { $setOnInsert: { value: candidate } },
        { upsert: true },
      );
    } catch (err) {
      // Two first calls at once: the loser's duplicate-key error means the key is stored.
      if ((err as { code?: unknown }).code !== DUPLICATE_KEY) throw err;
    }
    const stored = await this.settings.findOne({ _id: RUN_ID_KEY_ID });
    if (!stored) throw new Error('the run id key is missing from the counters collection');
    return stored.value;
  }

  async listCallbacksDue(changedBefore: Date, limit: number): Promise<RunRecord[]> {
    const docs = await this.runs
      .find({
        callbackDue: true,
        lifeCycleState: { $in: [...ENDED_STATES] },
        // Stored as ISO text of one fixed width, so text order is time order.
        updatedAt: { $lt: changedBefore.toISOString() },
      })
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
    return docs.map(fromStored);
  }
}
