import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineProcess, EngineError, type ProcessDefinition } from '../../../src/index.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';

/**
 * Review 29. Invariant 1: a recorded terminal state is never overwritten. For process managers ADR
 * 0008 keeps it by refusing, when a process is defined, any transition out of a final state ("No
 * transition may leave a final state, so COMPLETED is never overwritten"), and the repair
 * `instance.force_transition` refuses a COMPLETED instance. An operator command is a transition too
 * (seed 004: "pass it through the same lock, state transition and outbox transaction"), but its
 * `from` states are only checked to be states: one that lists a final state is accepted, and then
 * moves a COMPLETED instance back to ACTIVE and sends its commands again.
 */
const spec = {
  name: 'review29-shipment',
  states: ['Open', 'Shipped'],
  initial: 'Open',
  final: ['Shipped'],
  data: z.object({ key: z.string() }),
  initialData: (key: string) => ({ key }),
  messages: { Opened: z.object({ key: z.string() }), Shipped: z.object({ key: z.string() }) },
  correlate: (m: { payload: unknown }) => (m.payload as { key: string }).key,
  on: { Opened: [{ from: 'Open', to: 'Open' }], Shipped: [{ from: 'Open', to: 'Shipped' }] },
  operatorInputs: { Reopen: z.object({}) },
  operatorCommands: {
    Reopen: {
      from: ['Shipped'],
      to: 'Open',
      description: 'Open the shipment again.',
      then: (d: { key: string }) => ({
        emit: [{ type: 'BookCarrier', destination: 'shipping', payload: { key: d.key } }],
      }),
    },
  },
} as const;

/** The definition, or the refusal defineProcess gave (which is one way to keep the invariant). */
function define(): ProcessDefinition | EngineError {
  try {
    return defineProcess(spec as never);
  } catch (err) {
    if (err instanceof EngineError) return err;
    throw err;
  }
}

describe(`an operator command out of a final state (${testDbKind()})`, () => {
  const def = define();
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [], actions: [], processes: def instanceof EngineError ? [] : [def] });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  async function shipped(d: ProcessDefinition) {
    const key = `s-${randomUUID().slice(0, 8)}`;
    await t.engine.processes.deliver(d, { id: `o-${key}`, type: 'Opened', payload: { key } });
    const r = await t.engine.processes.deliver(d, { id: `s-${key}`, type: 'Shipped', payload: { key } });
    const row = await t.db.prisma.sagaInstance.findUniqueOrThrow({ where: { id: r.instanceId! } });
    expect(row).toMatchObject({ status: 'COMPLETED', current_state: 'Shipped' });
    return row;
  }

  /** What must hold after the attempt: still COMPLETED in its final state, no command queued. */
  async function stillCompleted(before: { id: string; version: number; completed_at: Date | null }) {
    const row = await t.db.prisma.sagaInstance.findUniqueOrThrow({ where: { id: before.id } });
    const queued = await t.db.prisma.outboxMessage.count({ where: { source_id: before.id } });
    expect({
      status: row.status,
      state: row.current_state,
      version: row.version,
      completedAt: row.completed_at?.toISOString() ?? null,
      queued,
    }).toEqual({
      status: 'COMPLETED',
      state: 'Shipped',
      version: before.version,
      completedAt: before.completed_at?.toISOString() ?? null,
      queued: 0,
    });
  }

  it('runOperatorCommand leaves a COMPLETED instance COMPLETED (or the definition was refused)', async () => {
    if (def instanceof EngineError) {
      expect(def.code).toBe('invalid_definition');
      return;
    }
    const row = await shipped(def);
    const r = await t.engine.processes
      .runOperatorCommand(def, row.id, {
        command: 'Reopen',
        input: {},
        expectedState: 'Shipped',
        operator: 'ops',
        reason: 'carrier lost it',
        idempotencyKey: randomUUID(),
      })
      .catch((e: unknown) => ({ outcome: 'threw', code: (e as EngineError).code }));
    await stillCompleted(row);
    expect(r.outcome).not.toBe('applied');
  });

  it('the repair instance.command leaves a COMPLETED instance COMPLETED, as force_transition does', async () => {
    if (def instanceof EngineError) {
      expect(def.code).toBe('invalid_definition');
      return;
    }
    const row = await shipped(def);
    const common = {
      target: { instanceId: row.id },
      expected: { state: 'Shipped', version: row.version },
      actor: 'ops',
      reason: 'carrier lost it',
    };
    // The engine's own repair refuses to move a COMPLETED instance by force...
    await expect(
      t.engine.repairs.apply({
        kind: 'instance.force_transition',
        ...common,
        to: 'Open',
        idempotencyKey: randomUUID(),
      }),
    ).rejects.toMatchObject({ code: 'repair_refused' });
    await stillCompleted(row);
    // ...and the process's own command is the same move.
    const r = await t.engine.repairs
      .apply({ kind: 'instance.command', ...common, command: 'Reopen', input: {}, idempotencyKey: randomUUID() })
      .then(
        (x) => x.status,
        (e: unknown) => (e as EngineError).code,
      );
    await stillCompleted(row);
    expect(r).toBe('repair_refused');
  });
});
