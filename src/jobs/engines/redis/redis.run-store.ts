import { Redis } from 'ioredis';
import type { TierViewRequest } from '../../../domain/tierview';
import {
  ENDED_STATES,
  LIFE_CYCLE_STATES,
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

/** Where the store connects: a client the caller owns (and closes), or a URL it opens itself. */
export type RedisRunStoreOptions = ({ client: Redis } | { url: string }) & {
  /** Prefix of every key the store writes (default `tiergraph:runs:`). */
  keyPrefix?: string;
};

const TRANSITION_COMMAND = 'tiergraphRunTransition';
const CREATE_COMMAND = 'tiergraphRunCreate';

/**
 * Checks the state and writes in one step (Redis runs a script without
 * interleaving other commands), then moves the run between the per-state sorted
 * sets when its state changed.
 *
 * KEYS: the run's hash, then one sorted set per life-cycle state, then the sorted
 * set of runs whose callback is due.
 * ARGV: the states in the order of those KEYS (JSON), the allowed `from` states
 * (JSON), the fields to write (JSON object of field -> encoded value), the run id,
 * the required attempt id as stored (JSON text) or '' for no such condition, and
 * 'add' or 'remove' to change the run's place in the callback set, or ''.
 *
 * Every hash value is itself JSON, and the script decodes only state names and the
 * field map, whose values are strings: values pass through untouched, so Lua's
 * JSON codec never re-encodes a request (it would turn `[]` into `{}` and round
 * numbers).
 */
const TRANSITION_LUA = `
local current = redis.call('HGET', KEYS[1], 'lifeCycleState')
if not current then return nil end
local state = cjson.decode(current)
local allowed = false
for _, s in ipairs(cjson.decode(ARGV[2])) do
  if s == state then allowed = true end
end
if not allowed then return nil end
if ARGV[5] ~= '' and (redis.call('HGET', KEYS[1], 'attemptId') or 'null') ~= ARGV[5] then return nil end
if ARGV[7] == 'uncanceled' and redis.call('HGET', KEYS[1], 'cancelRequested') == 'true' then return nil end
local args = {}
for field, value in pairs(cjson.decode(ARGV[3])) do
  args[#args + 1] = field
  args[#args + 1] = value
end
redis.call('HSET', KEYS[1], unpack(args))
local nextState = cjson.decode(redis.call('HGET', KEYS[1], 'lifeCycleState'))
if nextState ~= state then
  for i, s in ipairs(cjson.decode(ARGV[1])) do
    if s == state then redis.call('ZREM', KEYS[i + 1], ARGV[4]) end
    if s == nextState then redis.call('ZADD', KEYS[i + 1], ARGV[4], ARGV[4]) end
  end
end
if ARGV[6] == 'add' then redis.call('ZADD', KEYS[#KEYS], ARGV[4], ARGV[4]) end
if ARGV[6] == 'remove' then redis.call('ZREM', KEYS[#KEYS], ARGV[4]) end
return redis.call('HGETALL', KEYS[1])
`;

/**
 * Allocates an id and stores a PENDING run, only while its owner has no run under
 * the idempotency key given and fewer than the quota of runs pending or running:
 * the lookup, the count and the write are one step.
 *
 * KEYS: the id counter, the owner's sorted set of runs, the PENDING and RUNNING
 * sets, the owner's hash of idempotency keys (key -> run id).
 * ARGV: the quota ('' for none), the key prefix of run hashes, the fields of the
 * record without its id (JSON object of field -> encoded value), the idempotency
 * key ('' for none).
 * Returns {0, new id}, {1, 0} when the quota is reached, or {2, id} when the key
 * names run `id` already.
 */
const CREATE_LUA = `
if ARGV[4] ~= '' then
  local taken = redis.call('HGET', KEYS[5], ARGV[4])
  if taken then return {2, tonumber(taken)} end
end
if ARGV[1] ~= '' then
  local active = redis.call('ZINTERCARD', 2, KEYS[2], KEYS[3]) + redis.call('ZINTERCARD', 2, KEYS[2], KEYS[4])
  if active >= tonumber(ARGV[1]) then return {1, 0} end
end
local id = redis.call('INCR', KEYS[1])
local args = {'runId', tostring(id)}
for field, value in pairs(cjson.decode(ARGV[3])) do
  args[#args + 1] = field
  args[#args + 1] = value
end
redis.call('HSET', ARGV[2] .. id, unpack(args))
redis.call('ZADD', KEYS[3], id, tostring(id))
redis.call('ZADD', KEYS[2], id, tostring(id))
if ARGV[4] ~= '' then redis.call('HSET', KEYS[5], ARGV[4], tostring(id)) end
return {0, id}
`;

type CreateCommand = (...keysAndArgs: string[]) => Promise<[number, number]>;

type TransitionCommand = (...keysAndArgs: string[]) => Promise<string[] | null>;

/** Hash fields: each value JSON-encoded, so strings, numbers, booleans and null round-trip exactly. */
function encodeFields(fields: Partial<RunDocument>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) out[k] = JSON.stringify(v);
  return out;
}

function decodeFields(hash: Record<string, string>): RunRecord {
  const doc: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(hash)) doc[k] = JSON.parse(v);
  return fromRunDocument(doc as unknown as RunDocument);
}

/**
 * Run records in Redis, in the same server as Agenda's jobs when
 * `JOBS_BACKEND=redis`. Keys under the prefix:
 * - `seq`: the id counter (INCR never returns a value twice, and survives restarts
 *   as long as the server persists its data);
 * - `run:<id>`: one hash per run, a field per record field;
 * - `state:<STATE>`: a sorted set of the run ids in each state, scored by id, so
 *   the queue position is one ZCOUNT and a state count one ZCARD;
 * - `callback-due`: the ids of runs marked `callbackDue`, scored by id.
 */
export class RedisRunStore implements RunStore {
  readonly name = 'redis';
  private readonly client: Redis;
  private readonly ownsClient: boolean;
  private readonly prefix: string;

  constructor(options: RedisRunStoreOptions) {
    this.prefix = options.keyPrefix ?? 'tiergraph:runs:';
    if ('client' in options) {
      this.client = options.client;
      this.ownsClient = false;
    } else {
      // Connects in open(), so that constructing a store opens no socket.
      this.client = new Redis(options.url, { lazyConnect: true });
      this.ownsClient = true;
    }
  }

  private runKey(runId: number): string {
    return `${this.prefix}run:${runId}`;
  }

  private callbackDueKey(): string {
    return `${this.prefix}callback-due`;
  }

  private stateKey(state: LifeCycleState): string {
    return `${this.prefix}state:${state}`;
  }

  /** The sorted set of an owner's runs; runs without an owner share one that nothing lists. */
  private ownerKey(ownerKeyId: string | null): string {
    return ownerKeyId === null ? `${this.prefix}unowned` : `${this.prefix}owner:${ownerKeyId}`;
  }

  /** The hash of an owner's idempotency keys, each naming the run created under it. */
  private idempotencyKey(ownerKeyId: string | null): string {
    return `${this.ownerKey(ownerKeyId)}:idempotency-keys`;
  }

  private command<T>(name: string): T {
    // defineCommand adds the method at run time; the type system cannot see it.
    return (this.client as unknown as Record<string, T>)[name]!;
  }

  async open(): Promise<void> {
    if (this.ownsClient && this.client.status === 'wait') await this.client.connect();
    // A client shared between stores gets the command once; ioredis then sends
    // EVALSHA and falls back to EVAL when the server does not know the script yet.
    if (!(TRANSITION_COMMAND in this.client)) {
      this.client.defineCommand(TRANSITION_COMMAND, {
        numberOfKeys: 2 + LIFE_CYCLE_STATES.length,
        lua: TRANSITION_LUA,
      });
    }
    if (!(CREATE_COMMAND in this.client)) {
      this.client.defineCommand(CREATE_COMMAND, { numberOfKeys: 5, lua: CREATE_LUA });
    }
    await this.client.ping();
  }

  async close(): Promise<void> {
    if (!this.ownsClient) return;
    // QUIT lets pending replies arrive first; a client that never connected has none.
    if (this.client.status === 'ready') await this.client.quit();
    else this.client.disconnect();
  }

  async create(request: TierViewRequest, now: Date, options: CreateOptions = {}): Promise<RunRecord> {
    const owner = options.ownerKeyId ?? null;
    const key = options.idempotencyKey ?? null;
    const { runId: _allocated, ...fields } = toRunDocument(newRunRecord(0, request, now, owner, key));
    const [outcome, runId] = await this.command<CreateCommand>(CREATE_COMMAND).call(
      this.client,
      `${this.prefix}seq`,
      this.ownerKey(owner),
      this.stateKey('PENDING'),
      this.stateKey('RUNNING'),
      this.idempotencyKey(owner),
      options.maxActive === undefined ? '' : String(options.maxActive),
      `${this.prefix}run:`,
      JSON.stringify(encodeFields(fields)),
      key ?? '',
    );
    if (outcome === 1) throw new RunQuotaExceeded(options.maxActive!);
    if (outcome === 2) {
      const taken = await this.get(runId);
      if (!taken) throw new Error(`idempotency key names run ${runId}, which is not stored`);
      throw new RunKeyTaken(taken);
    }
    return newRunRecord(runId, request, now, owner, key);
  }

  async get(runId: number): Promise<RunRecord | null> {
    const hash = await this.client.hgetall(this.runKey(runId));
    return Object.keys(hash).length === 0 ? null : decodeFields(hash);
  }

  async transition(
    runId: number,
    from: readonly LifeCycleState[],
    patch: RunPatch,
    now: Date,
    guard?: TransitionGuard,
  ): Promise<RunRecord | null> {
    const flat = await this.command<TransitionCommand>(TRANSITION_COMMAND).call(
      this.client,
      this.runKey(runId),
      ...LIFE_CYCLE_STATES.map((s) => this.stateKey(s)),
      this.callbackDueKey(),
      JSON.stringify(LIFE_CYCLE_STATES),
      JSON.stringify(from),
      JSON.stringify(encodeFields(toPatchDocument(patch, now))),
      String(runId),
      guard ? JSON.stringify(guard.attemptId) : '',
      patch.callbackDue === undefined ? '' : patch.callbackDue ? 'add' : 'remove',
      guard?.uncanceled ? 'uncanceled' : '',
    );
    if (flat === null) return null;
    const hash: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) hash[flat[i]!] = flat[i + 1]!;
    return decodeFields(hash);
  }

  async listByOwner(ownerKeyId: string, limit: number, offset: number): Promise<RunRecord[]> {
    const ids = await this.client.zrevrange(this.ownerKey(ownerKeyId), offset, offset + limit - 1);
    if (ids.length === 0) return [];
    const pipeline = this.client.pipeline();
    for (const id of ids) pipeline.hgetall(this.runKey(Number(id)));
    const results = (await pipeline.exec()) ?? [];
    const runs: RunRecord[] = [];
    for (const [err, hash] of results) {
      if (err) throw err;
      const h = hash as Record<string, string>;
      if (Object.keys(h).length > 0) runs.push(decodeFields(h));
    }
    return runs;
  }

  async countPendingBefore(runId: number): Promise<number> {
    return this.client.zcount(this.stateKey('PENDING'), '-inf', `(${runId}`);
  }

  async countInState(state: LifeCycleState): Promise<number> {
    return this.client.zcard(this.stateKey(state));
  }

  async runIdKey(candidate: string): Promise<string> {
    const key = `${this.prefix}run-id-key`;
    await this.client.set(key, candidate, 'NX');
    const stored = await this.client.get(key);
    if (stored === null) throw new Error(`the run id key ${key} is missing`);
    return stored;
  }

  async listCallbacksDue(changedBefore: Date, limit: number): Promise<RunRecord[]> {
    // Few runs are ever marked at once (only those whose process died before queuing
    // the delivery, and ones ending right now), so reading the first ones is cheap.
    const ids = await this.client.zrange(this.callbackDueKey(), 0, Math.max(0, limit * 4 - 1));
    const runs: RunRecord[] = [];
    for (const id of ids) {
      const run = await this.get(Number(id));
      if (run?.callbackDue && ENDED_STATES.includes(run.lifeCycleState) && run.updatedAt < changedBefore) {
        runs.push(run);
        if (runs.length >= limit) break;
      }
    }
    return runs;
  }
}
