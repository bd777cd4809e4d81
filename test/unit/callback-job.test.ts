import { Writable } from 'node:stream';
import pino from 'pino';
import type { Agenda, Job } from 'agenda';
import { parseCallbackHosts } from '../../src/domain/callback-hosts';
import {
  CALLBACK_JOB,
  CallbackJob,
  callbackDeliveryId,
  parseCallbackJobInput,
} from '../../src/jobs/callback.job';
import { CallbackSender } from '../../src/jobs/callbacks';
import type { AttemptOutcome } from '../../src/jobs/callbacks';

const ID = '0b7c6f1e-5a2d-4c3b-9e8f-1a2b3c4d5e6f';
const input = { run_id: 7, url: 'https://hooks.example.com/in', delivery_id: ID };

/** A job as Agenda hands it to `perform`, after `failCount` failed attempts. */
const jobOf = (data: unknown, failCount = 0) =>
  ({ attrs: { _id: 'j1', data, failCount } }) as unknown as Job<unknown>;

function setUp(outcomes: AttemptOutcome[], payload: object | null = { run_id: '7' }) {
  const lines: { level: number; msg: string; [k: string]: unknown }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, done) {
      for (const t of chunk.toString().split('\n')) if (t) lines.push(JSON.parse(t) as (typeof lines)[0]);
      done();
    },
  });
  const sender = new CallbackSender({ secret: 's', maxAttempts: 3, baseDelayMs: 1000, random: () => 0 });
  const sent: { url: string; body: string; id: string }[] = [];
  sender.attempt = (url, body, id) => {
    sent.push({ url: url.href, body, id });
    return Promise.resolve(outcomes.shift()!);
  };
  const job = new CallbackJob({
    sender,
    rules: parseCallbackHosts('hooks.example.com'),
    allowHttp: false,
    payload: () => Promise.resolve(payload === null ? null : { body: payload, keyId: null }),
    publicRunId: (runId) => runId,
    log: pino({ level: 'debug' }, sink),
  });
  return { job, sent, lines };
}

describe('callback job input', () => {
  it('accepts what enqueue stores and nothing else', () => {
    expect(parseCallbackJobInput(input)).toEqual(input);
    expect(parseCallbackJobInput({ ...input, run_id: '7' })).toBeNull();
    expect(parseCallbackJobInput({ ...input, delivery_id: 'x' })).toBeNull();
    expect(parseCallbackJobInput({ run_id: 7, url: input.url })).toBeNull();
    expect(parseCallbackJobInput(null)).toBeNull();
  });

  it('queues a delivery with an id of its run: another per run, the same when queued again', async () => {
    const queued: unknown[] = [];
    const agenda = { now: (name: string, data: unknown) => (queued.push([name, data]), Promise.resolve()) };
    const { job } = setUp([]);
    const created = new Date('2026-03-04T05:06:07.089Z');
    const a = await job.enqueue(agenda as unknown as Agenda, 7, input.url, created);
    const b = await job.enqueue(agenda as unknown as Agenda, 8, input.url, created);
    const again = await job.enqueue(agenda as unknown as Agenda, 7, input.url, created);
    expect(queued).toEqual([
      [CALLBACK_JOB, a],
      [CALLBACK_JOB, b],
      [CALLBACK_JOB, again],
    ]);
    expect(parseCallbackJobInput(a)).toEqual(a);
    expect(a.delivery_id).not.toBe(b.delivery_id);
    expect(again.delivery_id).toBe(a.delivery_id);
    // Another installation's run 7, created at another time, gets another id.
    expect(callbackDeliveryId(7, new Date('2026-03-04T05:06:07.090Z'))).not.toBe(a.delivery_id);
    expect(a.delivery_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('callback job perform', () => {
  it('sends the run with the stored delivery id', async () => {
    const { job, sent, lines } = setUp([{ kind: 'delivered', status: 200 }]);
    await job.perform(jobOf(input));
    expect(sent).toEqual([{ url: input.url, body: '{"run_id":"7"}', id: ID }]);
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 30, msg: 'callback delivered', attempts: 1 }),
    );
  });

  it('asks for another attempt after the scheduled wait, or the Retry-After', async () => {
    const { job } = setUp([
      { kind: 'retry', status: 503, error: 'HTTP 503', retryAfterMs: null },
      { kind: 'retry', status: 429, error: 'HTTP 429', retryAfterMs: 7000 },
    ]);
    await expect(job.perform(jobOf(input, 1))).rejects.toMatchObject({ name: 'RetryLater', delayMs: 1000 });
    await expect(job.perform(jobOf(input, 0))).rejects.toMatchObject({ name: 'RetryLater', delayMs: 7000 });
  });

  it('gives up at the last attempt with a warning instead of failing the job', async () => {
    const { job, lines } = setUp([{ kind: 'retry', status: 503, error: 'HTTP 503', retryAfterMs: null }]);
    await expect(job.perform(jobOf(input, 2))).resolves.toBeUndefined();
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 40,
        msg: 'callback not delivered; giving up',
        attempts: 3,
        status: 503,
      }),
    );
  });

  it('drops a delivery whose host is no longer allowed, whose run is gone or whose data is unreadable', async () => {
    const moved = setUp([]);
    await moved.job.perform(jobOf({ ...input, url: 'https://other.example.com/in' }));
    expect(moved.sent).toEqual([]);
    const gone = setUp([], null);
    await gone.job.perform(jobOf(input));
    expect(gone.sent).toEqual([]);
    const garbled = setUp([]);
    await garbled.job.perform(jobOf({ run: 1 }));
    expect(garbled.sent).toEqual([]);
    const warnings = [...moved.lines, ...gone.lines, ...garbled.lines].filter((l) => l.level === 40);
    expect(warnings.map((l) => l.msg)).toEqual([
      'callback not sent',
      'callback not sent: the run no longer exists, or its API key was revoked',
      'callback job with unreadable data dropped',
    ]);
  });

  it('lets Agenda store the wait the attempt chose, and retry nothing else', async () => {
    const defined: { name: string; options: { backoff: (c: { error: Error }) => number | null } }[] = [];
    const agenda = {
      define: (name: string, _fn: unknown, options: never) => defined.push({ name, options }),
    };
    const { job } = setUp([{ kind: 'retry', status: 500, error: 'HTTP 500', retryAfterMs: 4000 }]);
    job.define(agenda as unknown as Agenda);
    expect(defined.map((d) => d.name)).toEqual([CALLBACK_JOB]);
    const retry = await job.perform(jobOf(input)).catch((e: Error) => e);
    expect(defined[0]!.options.backoff({ error: retry as Error })).toBe(4000);
    expect(defined[0]!.options.backoff({ error: new Error('bug') })).toBeNull();
  });
});
