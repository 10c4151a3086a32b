import { expect } from 'vitest';
import type { ControlPlane } from '../../src/start-control-plane.ts';

/** Polls until `check` returns a value (not undefined); fails naming `what` after `tries` polls. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, tries = 600): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await check();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** What {@link seedKnownSet} wrote, for the assertions. */
export interface KnownSet {
  /** When the instances' and outbox rows' ages were measured from. */
  t0: number;
  /** The status the engine gave the run of a flow no worker knows (it is stuck: unknown_flow). */
  ghostStatus: string;
}

const ago = (t0: number, seconds: number) => new Date(t0 - seconds * 1000);

/**
 * A known set of figures: 3 demo.order runs completed by the real engine (9 finished actions), one
 * run of an unregistered flow that the real worker parks as stuck (unknown_flow), and, written into
 * the tables the metrics read (the engine's own writing of them is proven by the engine suite):
 * anomalies (2 claim_lost, 1 outcome_rejected), instances of a process "metrics.proc" (2 ACTIVE in
 * AwaitingPayment, 1 QUARANTINED in Shipping, 1 COMPLETED) with their transitions (applied, repair,
 * and an ignored one and a release's audit row, which are not transitions), outbox rows (1 Pending not yet due, 1 Dead), and one
 * repair refused as a conflict (its audit row).
 */
export async function seedKnownSet(plane: ControlPlane): Promise<KnownSet> {
  const { prisma } = plane.db;
  const runs = await Promise.all(
    [1, 2, 3].map((i) => plane.engine.startFlow('demo.order', { orderId: `metrics-${i}`, amount: 10 })),
  );
  await eventually('the three demo.order runs to complete', async () => {
    const done = await prisma.flowRun.count({
      where: { id: { in: runs.map((r) => r.runId) }, status: 'Completed' },
    });
    return done === 3 ? true : undefined;
  });

  const ghost = await prisma.flowRun.create({ data: { flow_name: 'metrics.ghost', flow_version: 1, input: {} } });
  await prisma.job.create({ data: { kind: 'wake-run', run_id: ghost.id } });
  const parked = await eventually('the worker to park the unknown flow as stuck', async () => {
    const row = await prisma.flowRun.findUniqueOrThrow({ where: { id: ghost.id } });
    return row.stuck_reason === null ? undefined : row;
  });
  expect(parked.stuck_reason).toMatch(/^unknown_flow:/);
  // A repair drafted against a state the run is not in: refused as repair_conflict with nothing
  // changed but its audit row, which is what sagaflow_repairs_total counts.
  await expect(
    plane.engine.repairs.apply({
      kind: 'run.kick',
      target: { runId: ghost.id },
      expected: { runStatus: parked.status === 'Running' ? 'Waiting' : 'Running' },
      actor: 'metrics-test',
      reason: 'a stale draft',
      idempotencyKey: `metrics-${ghost.id}`,
    }),
  ).rejects.toMatchObject({ code: 'repair_conflict' });

  const t0 = Date.now();
  await prisma.anomalyLog.createMany({
    data: [
      { code: 'claim_lost', message: 'seeded' },
      { code: 'claim_lost', message: 'seeded' },
      { code: 'outcome_rejected', message: 'seeded' },
    ],
  });
  const instance = (key: string, status: string, state: string, updatedSecondsAgo: number) =>
    prisma.sagaInstance.create({
      data: {
        process_name: 'metrics.proc',
        correlation_key: key,
        status,
        current_state: state,
        // Created then too: an instance is never updated before it was created (ADR 0115's trigger).
        created_at: ago(t0, updatedSecondsAgo),
        updated_at: ago(t0, updatedSecondsAgo),
      },
    });
  const a = await instance('a', 'ACTIVE', 'AwaitingPayment', 120);
  const b = await instance('b', 'ACTIVE', 'AwaitingPayment', 30);
  const q = await instance('q', 'QUARANTINED', 'Shipping', 600);
  await instance('c', 'COMPLETED', 'Done', 5);
  const transition = (instanceId: string, from: string, to: string, outcome: string) => ({
    instance_id: instanceId,
    process_name: 'metrics.proc',
    from_state: from,
    to_state: to,
    message_id: `${instanceId}-${from}-${to}-${outcome}`,
    message_type: 'Seeded',
    outcome,
  });
  await prisma.processTransition.createMany({
    data: [
      transition(a.id, 'Start', 'AwaitingPayment', 'applied'),
      transition(b.id, 'Start', 'AwaitingPayment', 'applied'),
      transition(q.id, 'AwaitingPayment', 'Shipping', 'applied'),
      transition(q.id, 'Shipping', 'Shipping', 'repair'),
      transition(b.id, 'AwaitingPayment', 'AwaitingPayment', 'ignored'),
      // A release's audit row stays at the state it found: a quarantine lifted is not a transition.
      {
        ...transition(q.id, 'Shipping', 'Shipping', 'repair'),
        message_id: `${q.id}-release`,
        detail: { release: 'skip' },
      },
    ],
  });
  const outbox = (id: string, status: string) => ({
    message_id: `metrics-${id}`,
    source_kind: 'process',
    source_id: q.id,
    type: 'Seeded',
    destination: 'nowhere',
    payload: {},
    status,
    created_at: ago(t0, 100),
    // Not due for a day: the publisher leaves it Pending while the test reads it.
    available_at: new Date(t0 + 86_400_000),
  });
  await prisma.outboxMessage.createMany({ data: [outbox('pending', 'Pending'), outbox('dead', 'Dead')] });
  return { t0, ghostStatus: parked.status };
}
