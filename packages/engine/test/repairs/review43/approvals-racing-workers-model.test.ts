import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunDetail } from '../../../src/runtime/run-view.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import {
  checkInvariants,
  draft,
  fuzzActions,
  gates,
  saga,
  scripts,
  type Behaviour,
} from '../review40/support/fuzz-saga.ts';
import { gateEverything, runKinds } from './support/run-rows.ts';

type T = Awaited<ReturnType<typeof openTestEngine>>;

/** Seconds a pending approval lives in this model: the clock's 3600 s step expires every pending one. */
const expireAfter = 600;

type Op =
  | { kind: 'read' }
  | { kind: 'open'; step: number; ok: boolean }
  | { kind: 'draft'; repair: (typeof runKinds)[number]; step: number }
  | { kind: 'approve'; pick: number; race: 'none' | 'approve' | 'reject' | 'open' | 'advance' }
  | { kind: 'reject'; pick: number }
  | { kind: 'advance'; seconds: number }
  | { kind: 'restart' }
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
      kind: fc.constant('draft' as const),
      repair: fc.constantFrom(...runKinds),
      step: fc.integer({ min: 1, max: 3 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('approve' as const),
      pick: fc.nat(20),
      race: fc.constantFrom(
        'none' as const,
        'approve' as const,
        'reject' as const,
        'open' as const,
        'advance' as const,
      ),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reject' as const), pick: fc.nat(20) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('advance' as const), seconds: fc.constantFrom(1, 60, 3600) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'restart' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'settle' as const }) },
);

const behaviour = fc.constantFrom<Behaviour>('ok', 'fail', 'gate', 'gate');

/** Waits (by progress: no due, unlocked job for the run three polls running) until the workers are quiet. */
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

const allowed = new Set(['repair_conflict', 'repair_refused', 'approval_decided', 'approval_expired']);

describe(`review 43: two-person approvals of repairs racing live workers (${testDbKind()})`, () => {
  let t!: T;
  /** Every gate resolver ever seen: a reclaimed step's first attempt hangs on one the map no longer holds. */
  const everyGate = new Set<(ok: boolean) => void>();
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [saga],
      actions: fuzzActions,
      config: { worker: { concurrency: 4 }, approvals: { expire_after_seconds: expireAfter } },
    });
    await gateEverything(t);
    t.engine.startWorkers();
  });
  afterAll(async () => {
    for (const g of gates.values()) g(true);
    for (const g of everyGate) g(true);
    await t?.closeAll();
  });

  it('every interleaving of drafts, approvals, rejections, expiry, worker restarts and worker progress keeps the invariants', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(behaviour, { minLength: 3, maxLength: 3 }),
        fc.array(op, { minLength: 4, maxLength: 16 }),
        async (b, ops) => {
          const key = randomUUID();
          scripts.set(key, { steps: b });
          const { runId } = await t.engine.startFlow(saga, { key });
          const drafted: { approvalId: string; drafter: string }[] = [];
          const log: string[] = [`steps ${b.join(',')}`];
          const seeGates = () => {
            for (const [k, g] of gates) if (k.startsWith(`${key}:`)) everyGate.add(g);
          };
          const open = (step: number, ok: boolean) => {
            const g = gates.get(`${key}:${step}`);
            if (!g) return;
            gates.delete(`${key}:${step}`);
            g(ok);
          };
          const approve = (approvalId: string, approver: string) =>
            t.engine.approvals.approve(approvalId, approver).then(
              (v) => `${approver}:${v.status}`,
              (err: { code?: string }) => {
                if (!err.code || !allowed.has(err.code)) throw err;
                return `${approver}:${err.code}`;
              },
            );
          let seen = await quiesce(t, runId);
          for (const o of ops) {
            seeGates();
            if (o.kind === 'read') seen = (await t.engine.getRun(runId))!;
            else if (o.kind === 'open') {
              open(o.step, o.ok);
              log.push(`open ${o.step} ${o.ok ? 'ok' : 'fail'}`);
            } else if (o.kind === 'advance') {
              t.clock.advance(o.seconds * 1000);
              log.push(`advance ${o.seconds}s`);
            } else if (o.kind === 'settle') await quiesce(t, runId);
            else if (o.kind === 'restart') {
              // The pool stops (its in-flight action keeps hanging at its gate, its worker now gone) and a new one starts.
              await t.engine.stopWorkers(20);
              t.engine.startWorkers();
              log.push('restart workers');
            } else if (o.kind === 'draft') {
              // An operator drafts only against a run they saw open (a finished run's status is not an expectation).
              if (!['Pending', 'Running', 'Waiting', 'Compensating'].includes(seen.run.status)) continue;
              const drafter = `drafter-${drafted.length % 2}`;
              const cmd = { ...draft(o.repair, seen, o.step), actor: drafter };
              const r = await t.engine.approvals.submit(cmd).then(
                (v) => v,
                (err: { code?: string }) => {
                  if (err.code !== 'repair_conflict' && err.code !== 'repair_refused') throw err;
                  return { status: err.code };
                },
              );
              if (r.status === 'awaiting_approval' && 'approvalId' in r)
                drafted.push({ approvalId: r.approvalId, drafter });
              log.push(`draft ${o.repair} ${o.step} ${r.status}`);
            } else if (drafted.length > 0) {
              const { approvalId } = drafted[o.pick % drafted.length]!;
              if (o.kind === 'reject') {
                const r = await t.engine.approvals.reject(approvalId, 'r43-approver', 'no').then(
                  (v) => v.status,
                  (err: { code?: string }) => {
                    if (!err.code || !allowed.has(err.code)) throw err;
                    return err.code;
                  },
                );
                log.push(`reject #${drafted.findIndex((d) => d.approvalId === approvalId)} ${r}`);
              } else {
                const racing: Promise<string>[] = [approve(approvalId, 'r43-approver')];
                if (o.race === 'approve') racing.push(approve(approvalId, 'r43-second'));
                else if (o.race === 'reject')
                  racing.push(
                    t.engine.approvals.reject(approvalId, 'r43-second', 'no').then(
                      () => 'reject:rejected',
                      (err: { code?: string }) => {
                        if (!err.code || !allowed.has(err.code)) throw err;
                        return `reject:${err.code}`;
                      },
                    ),
                  );
                else if (o.race === 'open')
                  racing.push(
                    Promise.resolve().then(() => {
                      for (const s of [1, 2, 3]) open(s, true);
                      return 'opened';
                    }),
                  );
                else if (o.race === 'advance')
                  racing.push(
                    Promise.resolve().then(() => {
                      t.clock.advance(expireAfter * 1000);
                      return 'expiry';
                    }),
                  );
                const rs = await Promise.all(racing);
                log.push(
                  `approve #${drafted.findIndex((d) => d.approvalId === approvalId)} vs ${o.race}: ${rs.join(' ')}`,
                );
              }
            }
          }
          // Let everything finish: open every gate (a stopped worker's too), skip time to due wakes, until settled.
          for (let round = 0; round < 12; round++) {
            seeGates();
            for (const [k, g] of [...gates])
              if (k.startsWith(`${key}:`)) {
                gates.delete(k);
                g(true);
              }
            const d = await quiesce(t, runId);
            if (!['Running', 'Waiting', 'Compensating', 'Pending'].includes(d.run.status)) break;
            const next = await t.db.prisma.job.findFirst({
              where: { run_id: runId, available_at: { gt: t.clock.now() } },
              orderBy: { available_at: 'asc' },
            });
            if (next) t.clock.set(next.available_at);
          }
          try {
            const applied: string[] = [];
            for (const { approvalId, drafter } of drafted) {
              const a = await t.db.prisma.repairApproval.findUniqueOrThrow({ where: { id: approvalId } });
              const rows = await t.db.prisma.repairCommand.findMany({ where: { approval_id: approvalId } });
              const what = `approval ${approvalId} (${a.command}) ${a.status}`;
              if (a.status === 'applied' || a.status === 'conflict' || a.status === 'refused') {
                // Exactly one audit row, with the approval's status, naming drafter and approver.
                expect(
                  rows.map((r) => [r.status, r.actor, r.approved_by]),
                  `${what}: one audit row naming both people`,
                ).toEqual([[a.status, drafter, a.decided_by]]);
                expect((a.result as { repairId?: string } | null)?.repairId, `${what}: result names its repair`).toBe(
                  rows[0]!.id,
                );
                if (a.status === 'applied') applied.push(rows[0]!.id);
              } else {
                expect(['pending', 'rejected', 'expired'], what).toContain(a.status);
                expect(rows, `${what}: nothing applied`).toEqual([]);
              }
              // The approval's key is used by no other audit row (applies at most once).
              expect(
                await t.db.prisma.repairCommand.count({ where: { idempotency_key: a.idempotency_key } }),
                `${what}: its key audited at most once`,
              ).toBeLessThanOrEqual(1);
            }
            await checkInvariants(t, runId, key, applied);
          } catch (err) {
            throw new Error(`${(err as Error).message}\n  sequence: ${log.join(' | ')}`, { cause: err });
          }
          if (process.env.R43_LOG) console.info(log.join(' | '));
        },
      ),
      { numRuns: Number(process.env.R43_RUNS ?? 20), endOnFailure: true },
    );
  }, 600_000);
});
