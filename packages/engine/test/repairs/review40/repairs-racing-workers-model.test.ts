import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { RunDetail } from '../../../src/runtime/run-view.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { checkInvariants, draft, fuzzActions, gates, saga, scripts, type Behaviour } from './support/fuzz-saga.ts';

type T = Awaited<ReturnType<typeof openTestEngine>>;

const kinds = [
  'run.kick',
  'run.retry_step',
  'run.reclaim_step',
  'run.cancel',
  'run.terminate',
  'run.signal',
  'run.expire',
  'run.complete_step',
  'run.resume_from_step',
] as const;

type Op =
  | { kind: 'read' }
  | { kind: 'open'; step: number; ok: boolean }
  | { kind: 'repair'; repair: (typeof kinds)[number]; step: number }
  | { kind: 'advance'; seconds: number }
  | { kind: 'settle' };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({ kind: 'read' as const }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('open' as const),
      step: fc.integer({ min: 1, max: 3 }),
      ok: fc.boolean(),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('repair' as const),
      repair: fc.constantFrom(...kinds),
      step: fc.integer({ min: 1, max: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('advance' as const), seconds: fc.constantFrom(1, 60, 3600) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'settle' as const }) },
);

const behaviour = fc.constantFrom<Behaviour>('ok', 'fail', 'gate', 'gate');

/** Waits (by progress: no due job left and every open gate counted) until the workers have nothing to do now. */
async function quiesce(t: T, runId: string): Promise<RunDetail> {
  let quiet = 0;
  const deadline = Date.now() + 5_000;
  for (;;) {
    const due = await t.db.prisma.job.count({
      where: { available_at: { lte: t.clock.now() }, run_id: runId, locked_by: null },
    });
    quiet = due === 0 ? quiet + 1 : 0;
    if (quiet >= 3 || Date.now() > deadline) return (await t.engine.getRun(runId))!;
    await new Promise((r) => setTimeout(r, 15));
  }
}

describe('review 40: operator repairs racing live workers on a saga (randomized interleavings)', () => {
  let t!: T;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [saga], actions: fuzzActions, config: { worker: { concurrency: 4 } } });
    t.engine.startWorkers();
  });
  afterAll(async () => {
    for (const g of gates.values()) g(true);
    await t?.closeAll();
  });

  it('every sequence of worker progress and stale-drafted repairs keeps the saga invariants', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(behaviour, { minLength: 3, maxLength: 3 }),
        fc.array(op, { minLength: 4, maxLength: 16 }),
        async (b, ops) => {
          const t0 = Date.now();
          const key = randomUUID();
          scripts.set(key, { steps: b });
          const { runId } = await t.engine.startFlow(saga, { key });
          const applied: string[] = [];
          let seen = await quiesce(t, runId);
          const log: string[] = [`steps ${b.join(',')}`];
          for (const o of ops) {
            if (o.kind === 'read') seen = (await t.engine.getRun(runId))!;
            else if (o.kind === 'open') {
              const g = gates.get(`${key}:${o.step}`);
              if (g) {
                gates.delete(`${key}:${o.step}`);
                g(o.ok);
                log.push(`open ${o.step} ${o.ok ? 'ok' : 'fail'}`);
              }
            } else if (o.kind === 'advance') {
              t.clock.advance(o.seconds * 1000);
              log.push(`advance ${o.seconds}s`);
            } else if (o.kind === 'settle') await quiesce(t, runId);
            else if (!['Pending', 'Running', 'Waiting', 'Compensating'].includes(seen.run.status)) continue;
            else {
              const cmd = draft(o.repair, seen, o.step);
              try {
                const r = await t.engine.repairs.apply(cmd);
                applied.push(r.id);
                log.push(`${o.repair} ${o.step} applied`);
              } catch (err) {
                const code = (err as { code?: string }).code;
                log.push(`${o.repair} ${o.step} ${code}`);
                if (code !== 'repair_conflict' && code !== 'repair_refused') throw err;
              }
            }
          }
          // Let everything finish: open every gate (succeeding), skip time to due wakes, until settled.
          for (let round = 0; round < 12; round++) {
            for (const [k, g] of [...gates])
              if (k.startsWith(`${key}:`)) {
                gates.delete(k);
                g(true);
              }
            const d = await quiesce(t, runId);
            if (
              d.run.status !== 'Running' &&
              d.run.status !== 'Waiting' &&
              d.run.status !== 'Compensating' &&
              d.run.status !== 'Pending'
            )
              break;
            const next = await t.db.prisma.job.findFirst({
              where: { run_id: runId, available_at: { gt: t.clock.now() } },
              orderBy: { available_at: 'asc' },
            });
            if (next) t.clock.set(next.available_at);
          }
          if (process.env.R40_LOG) console.info(`${Date.now() - t0} ms: ${log.join(' | ')}`);
          try {
            await checkInvariants(t, runId, key, applied);
          } catch (err) {
            throw new Error(`${(err as Error).message}\n  sequence: ${log.join(' | ')}`, { cause: err });
          }
        },
      ),
      { numRuns: Number(process.env.R40_RUNS ?? 25), endOnFailure: true },
    );
  }, 600_000);
});
