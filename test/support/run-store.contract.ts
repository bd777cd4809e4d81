import type { RunStore } from '../../src/jobs/run-store';

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
      const a = await store.create({ root_nodes: 'v1', num_tiers: 2 }, t0);
      const b = await store.create({ root_nodes: 'v2' }, later(1));
      expect(b.runId).toBeGreaterThan(a.runId);
      expect(a.runId).toBeGreaterThanOrEqual(1);
      const got = await store.get(a.runId);
      expect(got).toEqual({
        runId: a.runId,
        request: { root_nodes: 'v1', num_tiers: 2 },
        lifeCycleState: 'PENDING',
        resultState: null,
        stateMessage: '',
        userCancelledOrTimedout: false,
        cancelRequested: false,
        files: null,
        attempts: 0,
        createdAt: t0,
        startedAt: null,
        endedAt: null,
        updatedAt: t0,
      });
      expect(await store.get(b.runId + 1000)).toBeNull();
    });

    test('ids are never reused, also after a reopen', async () => {
      const ids: number[] = [];
      for (let i = 0; i < 5; i++) ids.push((await store.create({ i }, t0)).runId);
      const again = await reopen();
      opened.push(again);
      await again.open();
      const next = await again.create({ i: 5 }, t0);
      expect(next.runId).toBeGreaterThan(Math.max(...ids));
      expect(new Set(ids).size).toBe(5);
      expect((await again.get(ids[0]!))?.request).toEqual({ i: 0 });
    });

    test('concurrent creates get distinct ids', async () => {
      const runs = await Promise.all(Array.from({ length: 25 }, (_, i) => store.create({ i }, t0)));
      expect(new Set(runs.map((r) => r.runId)).size).toBe(25);
    });

    test('transition applies only from the given states', async () => {
      const r = await store.create({}, t0);
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
      const r = await store.create({}, t0);
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
      const r = await store.create({}, t0);
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
      for (let i = 0; i < 4; i++) runs.push(await store.create({ i }, later(i)));
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
  });
}
