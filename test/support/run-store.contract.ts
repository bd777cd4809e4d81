import type { TierViewRequest } from '../../src/domain/tierview';
import { RunKeyTaken, RunQuotaExceeded } from '../../src/jobs/run-store';
import type { RunStore } from '../../src/jobs/run-store';

/** A request told apart by its root. */
export const req = (root: string | number, tiers = 2): TierViewRequest => ({
  root_nodes: `v${root}`,
  num_tiers: tiers,
  direction: 'supplier',
  min_evid_date: null,
  output_multiple_tables: false,
  callback_url: null,
});

/**
 * One suite for every RunStore backend. `make` returns a store over an empty
 * namespace (fresh file, schema, key prefix or collection); `reopen` returns a
 * second store over the same namespace, as a restarted process would see it.
 */
export function runStoreContract(
  name: string,
  make: () => Promise<{ store: RunStore; reopen: () => Promise<RunStore> }>,
): void {
  describe(`RunStore contract: ${name}`, () => {
    const t0 = new Date('2026-01-02T03:04:05.678Z');
    const later = (s: number) => new Date(t0.getTime() + s * 1000);
    let store: RunStore;
    let reopen: () => Promise<RunStore>;
    const opened: RunStore[] = [];

    beforeEach(async () => {
      ({ store, reopen } = await make());
      opened.push(store);
      await store.open();
    });
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
    });

    test('create allocates increasing ids and stores a PENDING record', async () => {
      const a = await store.create(req(1), t0);
      const b = await store.create(req(2), later(1));
      expect(b.runId).toBeGreaterThan(a.runId);
      expect(a.runId).toBeGreaterThanOrEqual(1);
      const got = await store.get(a.runId);
      expect(got).toEqual({
        runId: a.runId,
        request: req(1),
        ownerKeyId: null,
        idempotencyKey: null,
        lifeCycleState: 'PENDING',
        resultState: null,
        stateMessage: '',
        userCancelledOrTimedout: false,
        cancelRequested: false,
        files: null,
        attempts: 0,
        attemptId: null,
        heartbeatAt: null,
        callbackDue: false,
        createdAt: t0,
        startedAt: null,
        endedAt: null,
        updatedAt: t0,
      });
      expect(await store.get(b.runId + 1000)).toBeNull();
    });

    test('ids are never reused, also after a reopen', async () => {
      const ids: number[] = [];
      for (let i = 0; i < 5; i++) ids.push((await store.create(req(i), t0)).runId);
      const again = await reopen();
      opened.push(again);
      await again.open();
      const next = await again.create(req(5), t0);
      expect(next.runId).toBeGreaterThan(Math.max(...ids));
      expect(new Set(ids).size).toBe(5);
      expect((await again.get(ids[0]!))?.request).toEqual(req(0));
    });

    test('keeps the first run id key it is given, for every store over it', async () => {
      const a = 'first-key-0123456789abcdef-0123456789';
      const b = 'second-key-0123456789abcdef-012345678';
      const again = await reopen();
      opened.push(again);
      await again.open();
      // Two processes starting at once: one key wins, and both read it.
      const [one, two] = await Promise.all([store.runIdKey(a), again.runIdKey(b)]);
      expect(one).toBe(two);
      expect([a, b]).toContain(one);
      expect(await store.runIdKey('third-key-0123456789abcdef-01234567')).toBe(one);
      const third = await reopen();
      opened.push(third);
      await third.open();
      expect(await third.runIdKey('fourth-key-0123456789abcdef-0123456')).toBe(one);
    });

    test('concurrent creates get distinct ids', async () => {
      const runs = await Promise.all(Array.from({ length: 25 }, (_, i) => store.create(req(i), t0)));
      expect(new Set(runs.map((r) => r.runId)).size).toBe(25);
    });

    test('transition applies only from the given states', async () => {
      const r = await store.create(req(0), t0);
      const running = await store.transition(
        r.runId,
        ['PENDING'],
        { lifeCycleState: 'RUNNING', startedAt: later(1), attempts: 1, stateMessage: 'tier 1 of 2' },
        later(1),
      );
      expect(running).toMatchObject({
        lifeCycleState: 'RUNNING',
        startedAt: later(1),
        attempts: 1,
        stateMessage: 'tier 1 of 2',
        updatedAt: later(1),
        createdAt: t0,
      });
      expect(
        await store.transition(r.runId, ['PENDING'], { lifeCycleState: 'RUNNING' }, later(2)),
      ).toBeNull();
      const done = await store.transition(
        r.runId,
        ['RUNNING'],
        {
          lifeCycleState: 'TERMINATED',
          resultState: 'SUCCESS',
          stateMessage: '',
          files: { tierview_file: 'exports/1/tierview.csv' },
          endedAt: later(3),
        },
        later(3),
      );
      expect(done).toMatchObject({
        lifeCycleState: 'TERMINATED',
        resultState: 'SUCCESS',
        files: { tierview_file: 'exports/1/tierview.csv' },
        endedAt: later(3),
        attempts: 1,
      });
      expect(await store.get(r.runId)).toEqual(done);
      expect(await store.transition(9_999_999, ['PENDING'], { stateMessage: 'x' }, later(4))).toBeNull();
    });

    test('a patch that keeps the state still needs a matching state', async () => {
      const r = await store.create(req(0), t0);
      const flagged = await store.transition(
        r.runId,
        ['PENDING', 'RUNNING'],
        { cancelRequested: true },
        later(1),
      );
      expect(flagged).toMatchObject({ lifeCycleState: 'PENDING', cancelRequested: true });
      await store.transition(
        r.runId,
        ['PENDING'],
        { lifeCycleState: 'TERMINATED', resultState: 'CANCELED' },
        later(2),
      );
      expect(
        await store.transition(r.runId, ['PENDING', 'RUNNING'], { stateMessage: 'late' }, later(3)),
      ).toBeNull();
      expect((await store.get(r.runId))?.stateMessage).toBe('');
    });

    test('exactly one of two racing transitions from the same state wins', async () => {
      const r = await store.create(req(0), t0);
      const results = await Promise.all([
        store.transition(r.runId, ['PENDING'], { lifeCycleState: 'RUNNING' }, later(1)),
        store.transition(
          r.runId,
          ['PENDING'],
          { lifeCycleState: 'TERMINATED', resultState: 'CANCELED', userCancelledOrTimedout: true },
          later(1),
        ),
      ]);
      expect(results.filter((x) => x !== null)).toHaveLength(1);
    });

    test('queue position and state counts', async () => {
      const runs = [];
      for (let i = 0; i < 4; i++) runs.push(await store.create(req(i), later(i)));
      await store.transition(runs[0]!.runId, ['PENDING'], { lifeCycleState: 'RUNNING' }, later(5));
      expect(await store.countPendingBefore(runs[0]!.runId)).toBe(0);
      expect(await store.countPendingBefore(runs[1]!.runId)).toBe(0);
      expect(await store.countPendingBefore(runs[3]!.runId)).toBe(2);
      expect(await store.countInState('PENDING')).toBe(3);
      expect(await store.countInState('RUNNING')).toBe(1);
      expect(await store.countInState('TERMINATED')).toBe(0);
      await store.transition(runs[2]!.runId, ['PENDING'], { lifeCycleState: 'TERMINATED' }, later(6));
      expect(await store.countPendingBefore(runs[3]!.runId)).toBe(1);
      expect(await store.countInState('TERMINATED')).toBe(1);
    });
    test('a guarded transition applies only for the holding attempt', async () => {
      const r = await store.create(req(0), t0);
      const claimed = await store.transition(
        r.runId,
        ['PENDING'],
        { lifeCycleState: 'RUNNING', attemptId: 'a1', heartbeatAt: later(1) },
        later(1),
        { attemptId: null },
      );
      expect(claimed).toMatchObject({ attemptId: 'a1', heartbeatAt: later(1) });
      expect(await store.get(r.runId)).toEqual(claimed);
      // A second claim from PENDING, or one naming another holder, changes nothing.
      expect(
        await store.transition(r.runId, ['RUNNING'], { attemptId: 'a2' }, later(2), { attemptId: null }),
      ).toBeNull();
      expect(
        await store.transition(r.runId, ['RUNNING'], { attemptId: 'a2' }, later(2), { attemptId: 'a0' }),
      ).toBeNull();
      // Takeover: exactly one of two racing attempts replaces the stale holder.
      const takeovers = await Promise.all(
        ['b1', 'b2'].map((id) =>
          store.transition(r.runId, ['RUNNING'], { attemptId: id }, later(3), { attemptId: 'a1' }),
        ),
      );
      const won = takeovers.filter((x) => x !== null);
      expect(won).toHaveLength(1);
      const holder = won[0]!.attemptId!;
      // The old holder can no longer commit; the new one can.
      const commit = (attemptId: string) =>
        store.transition(
          r.runId,
          ['RUNNING'],
          { lifeCycleState: 'TERMINATED', resultState: 'SUCCESS', files: { f: `runs/1/${attemptId}/f.csv` } },
          later(4),
          { attemptId },
        );
      expect(await commit('a1')).toBeNull();
      expect(await commit(holder)).toMatchObject({ resultState: 'SUCCESS', attemptId: holder });
      expect(await commit(holder)).toBeNull();
    });
    test('a transition guarded as uncanceled does not apply once a cancel is requested', async () => {
      const r = await store.create(req(0), t0);
      await store.transition(r.runId, ['PENDING'], { lifeCycleState: 'RUNNING', attemptId: 'a1' }, later(1));
      const succeed = () =>
        store.transition(
          r.runId,
          ['RUNNING'],
          { lifeCycleState: 'TERMINATED', resultState: 'SUCCESS' },
          later(3),
          {
            attemptId: 'a1',
            uncanceled: true,
          },
        );
      // Another process records a cancel: the holder's SUCCESS no longer applies, its CANCELED does.
      expect(await store.transition(r.runId, ['RUNNING'], { cancelRequested: true }, later(2))).toMatchObject(
        {
          cancelRequested: true,
        },
      );
      expect(await succeed()).toBeNull();
      expect(
        await store.transition(
          r.runId,
          ['RUNNING'],
          { lifeCycleState: 'TERMINATED', resultState: 'CANCELED' },
          later(4),
          {
            attemptId: 'a1',
          },
        ),
      ).toMatchObject({ resultState: 'CANCELED' });
      // Without a cancel, the same guard lets it through.
      const other = await store.create(req(1), t0);
      await store.transition(
        other.runId,
        ['PENDING'],
        { lifeCycleState: 'RUNNING', attemptId: 'a1' },
        later(1),
      );
      expect(
        await store.transition(
          other.runId,
          ['RUNNING'],
          { lifeCycleState: 'TERMINATED', resultState: 'SUCCESS' },
          later(3),
          { attemptId: 'a1', uncanceled: true },
        ),
      ).toMatchObject({ resultState: 'SUCCESS' });
    });

    test('runs belong to their owner: listed newest first, paginated', async () => {
      const mine = [];
      for (let i = 0; i < 5; i++) {
        mine.push((await store.create(req(i), later(i), { ownerKeyId: 'key-a' })).runId);
        await store.create(req(i), later(i), { ownerKeyId: 'key-b' });
      }
      await store.create(req(9), later(9));
      expect((await store.get(mine[0]!))?.ownerKeyId).toBe('key-a');
      const page1 = await store.listByOwner('key-a', 2, 0);
      const page3 = await store.listByOwner('key-a', 2, 4);
      expect(page1.map((r) => r.runId)).toEqual([mine[4], mine[3]]);
      expect(page3.map((r) => r.runId)).toEqual([mine[0]]);
      expect(page1.every((r) => r.ownerKeyId === 'key-a')).toBe(true);
      expect(await store.listByOwner('key-a', 2, 6)).toEqual([]);
      expect(await store.listByOwner('key-c', 10, 0)).toEqual([]);
    });

    test('an owner has at most maxActive runs pending or running, also when creates race', async () => {
      const create = (i: number) => store.create(req(i), t0, { ownerKeyId: 'key-q', maxActive: 3 });
      const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => create(i)));
      // Exactly the quota: never more, and a racing burst does not refuse itself below it.
      const made = results.filter((r) => r.status === 'fulfilled').length;
      expect(made).toBe(3);
      for (const r of results) {
        if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(RunQuotaExceeded);
      }
      for (let i = made; i < 3; i++) await create(i);
      await expect(create(9)).rejects.toBeInstanceOf(RunQuotaExceeded);
      // Another owner has its own quota.
      await expect(store.create(req(0), t0, { ownerKeyId: 'key-r', maxActive: 3 })).resolves.toBeTruthy();
      // A run that ends frees its slot.
      const [newest] = await store.listByOwner('key-q', 1, 0);
      await store.transition(newest!.runId, ['PENDING'], { lifeCycleState: 'TERMINATED' }, later(1));
      await expect(create(10)).resolves.toBeTruthy();
      await expect(create(11)).rejects.toBeInstanceOf(RunQuotaExceeded);
      expect(await store.listByOwner('key-q', 10, 0)).toHaveLength(4);
    });

    test('an idempotency key names one run of its owner, also when creates race and after a reopen', async () => {
      const keyed = (owner: string | null, key: string, root = 1) =>
        store.create(req(root), t0, { ownerKeyId: owner, idempotencyKey: key, maxActive: 2 });
      const taken = async (p: Promise<unknown>) => {
        const err = await p.then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(RunKeyTaken);
        return (err as RunKeyTaken).run;
      };
      // Five creates under one key at once: one run, and the other four are given it.
      const results = await Promise.allSettled([1, 2, 3, 4, 5].map(() => keyed('key-i', 'k-1')));
      const made = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      expect(made).toHaveLength(1);
      expect(made[0]).toMatchObject({
        ownerKeyId: 'key-i',
        idempotencyKey: 'k-1',
        lifeCycleState: 'PENDING',
      });
      for (const r of results) {
        if (r.status === 'rejected') {
          expect(r.reason).toBeInstanceOf(RunKeyTaken);
          expect((r.reason as RunKeyTaken).run).toEqual(made[0]);
        }
      }
      expect(await store.get(made[0]!.runId)).toEqual(made[0]);
      // The key is the owner's: another owner, or none, may use it; another key is another run.
      const other = await keyed('key-j', 'k-1');
      const unowned = await store.create(req(1), t0, { idempotencyKey: 'k-1' });
      const second = await keyed('key-i', 'k-2');
      expect(new Set([made[0]!.runId, other.runId, unowned.runId, second.runId]).size).toBe(4);
      expect((await taken(store.create(req(1), t0, { idempotencyKey: 'k-1' }))).runId).toBe(unowned.runId);
      // The key is looked up before the quota (key-i has two runs pending, its most), and whatever the
      // run's state or the request now: comparing requests is the caller's part.
      await store.transition(second.runId, ['PENDING'], { lifeCycleState: 'TERMINATED' }, later(1));
      const again = await taken(keyed('key-i', 'k-2', 7));
      expect(again).toMatchObject({ runId: second.runId, lifeCycleState: 'TERMINATED', request: req(1) });
      await expect(keyed('key-i', 'k-3')).resolves.toMatchObject({ idempotencyKey: 'k-3' });
      await expect(keyed('key-i', 'k-4')).rejects.toBeInstanceOf(RunQuotaExceeded);
      // Keys are compared exactly, and runs without one never match.
      await expect(keyed('key-j', 'K-1')).resolves.toMatchObject({ idempotencyKey: 'K-1' });
      expect(await store.create(req(1), t0, { ownerKeyId: 'key-k' })).toMatchObject({ idempotencyKey: null });
      // A restarted process sees the keys.
      const reopened = await reopen();
      opened.push(reopened);
      await reopened.open();
      const seen = await taken(reopened.create(req(1), t0, { ownerKeyId: 'key-i', idempotencyKey: 'k-1' }));
      expect(seen).toEqual(made[0]);
    });

    test('ended runs marked as owing a callback are listed until the mark is cleared', async () => {
      const ended = await store.create(req(1), t0);
      const running = await store.create(req(2), t0);
      const fresh = await store.create(req(3), t0);
      const unmarked = await store.create(req(4), t0);
      const end = { lifeCycleState: 'TERMINATED', resultState: 'SUCCESS' } as const;
      await store.transition(ended.runId, ['PENDING'], { ...end, callbackDue: true }, later(1));
      // Marked but not ended: not listed (a mark is only ever set by the ending transition).
      await store.transition(
        running.runId,
        ['PENDING'],
        { lifeCycleState: 'RUNNING', callbackDue: true },
        later(1),
      );
      // Ended and marked, but too recently.
      await store.transition(fresh.runId, ['PENDING'], { ...end, callbackDue: true }, later(60));
      await store.transition(unmarked.runId, ['PENDING'], end, later(1));

      const due = await store.listCallbacksDue(later(30), 10);
      expect(due.map((r) => r.runId)).toEqual([ended.runId]);
      expect(due[0]).toMatchObject({ callbackDue: true, resultState: 'SUCCESS' });
      expect((await store.get(unmarked.runId))?.callbackDue).toBe(false);
      expect((await store.listCallbacksDue(later(61), 10)).map((r) => r.runId)).toEqual([
        ended.runId,
        fresh.runId,
      ]);
      expect(await store.listCallbacksDue(later(61), 1)).toHaveLength(1);

      // A restarted process sees the mark; clearing it takes the run off the list.
      const other = await reopen();
      opened.push(other);
      await other.open();
      expect((await other.listCallbacksDue(later(30), 10)).map((r) => r.runId)).toEqual([ended.runId]);
      const cleared = await other.transition(ended.runId, ['TERMINATED'], { callbackDue: false }, later(70));
      expect(cleared).toMatchObject({ callbackDue: false, resultState: 'SUCCESS' });
      expect((await store.listCallbacksDue(later(100), 10)).map((r) => r.runId)).toEqual([fresh.runId]);
    });
  });
}
