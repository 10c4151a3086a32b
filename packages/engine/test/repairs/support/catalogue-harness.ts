import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import { EngineError, type RepairCommand, type RepairResult } from '../../../src/index.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { actions, flows, switches, ticket, waiter } from './repair-fixtures.ts';
import { addedRows, snapshotTables, without } from './snapshot.ts';

type T = Awaited<ReturnType<typeof openTestEngine>>;

/**
 * Issue 9's guarantees for every command of the catalogue, proved the same way for each (the test
 * files run-repairs, reclaim-repairs and instance-repairs): a preview writes nothing; a stale
 * expected state changes nothing (only the audit row saying so); apply does what the preview said,
 * with its history and audit rows; the same idempotency key has no second effect.
 *
 * Opens a test engine for the calling file's tests (closed after them) and returns it with the
 * helpers that park runs, draft commands and prove them.
 */
export function useCatalogue() {
  let t!: T;
  beforeAll(async () => {
    t = await openTestEngine({
      flows,
      actions,
      processes: [ticket],
      config: { processes: { quarantine_after_seconds: 60 } },
    });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  const who = { actor: 'ops@example.test', reason: 'issue 9 catalogue test' };

  /** Drives a run until `until`, then stops the workers so nothing but the repair moves it. */
  async function parkedRun(
    flow: (typeof flows)[number],
    until: Parameters<T['drive']>[1] extends infer O ? (O extends { until?: infer U } ? U : never) : never,
  ) {
    const { runId } = await t.engine.startFlow(flow, null);
    const d = await t.drive(runId, { skipTime: false, until });
    await t.engine.stopWorkers();
    return d;
  }

  async function waitingRun() {
    switches.variant = 'a';
    return parkedRun(waiter, (d) => d.run.waitingFor?.startsWith('signal') ?? false);
  }

  async function ticketAt(state: 'Open' | 'Review') {
    // Runs left open by earlier tests must not move while this test compares snapshots.
    await t.engine.stopWorkers();
    const key = `t-${randomUUID().slice(0, 8)}`;
    await t.engine.processes.deliver(ticket, { id: `open-${key}`, type: 'Opened', payload: { key } });
    if (state === 'Review')
      await t.engine.processes.deliver(ticket, { id: `rev-${key}`, type: 'Reviewed', payload: { key } });
    const found = await t.db.prisma.sagaInstance.findFirstOrThrow({ where: { correlation_key: key } });
    return { key, id: found.id, state: found.current_state, version: found.version };
  }

  async function quarantinedTicket() {
    const k = await ticketAt('Open');
    const poison = { id: `poison-${k.key}`, type: 'Note', payload: { key: k.key, note: 'poison pill' } };
    await expect(t.engine.processes.deliver(ticket, poison)).rejects.toThrow(/cannot take note/);
    t.clock.advance(61_000);
    expect(await t.engine.processes.deliver(ticket, poison)).toMatchObject({ outcome: 'quarantined' });
    const row = await t.db.prisma.sagaInstance.findUniqueOrThrow({ where: { id: k.id } });
    return { ...k, state: row.current_state, version: row.version };
  }

  const runCmd = (kind: string, d: { run: { id: string; status: string } }, extra: object = {}) =>
    ({
      kind,
      target: { runId: d.run.id },
      expected: { runStatus: d.run.status },
      ...who,
      idempotencyKey: randomUUID(),
      ...extra,
    }) as RepairCommand;
  const stepCmd = (
    kind: string,
    d: { run: { id: string; status: string }; actions: { sequence: number; status: string; attempts: number }[] },
    sequence: number,
    extra: object = {},
  ) => {
    const step = d.actions.find((a) => a.sequence === sequence)!;
    return {
      kind,
      target: { runId: d.run.id, stepSequence: sequence },
      expected: { runStatus: d.run.status, stepStatus: step.status, stepAttempts: step.attempts },
      ...who,
      idempotencyKey: randomUUID(),
      ...extra,
    } as RepairCommand;
  };
  const instanceCmd = (kind: string, i: { id: string; state: string; version: number }, extra: object = {}) =>
    ({
      kind,
      target: { instanceId: i.id },
      expected: { state: i.state, version: i.version },
      ...who,
      idempotencyKey: randomUUID(),
      ...extra,
    }) as RepairCommand;

  /** The expected state the command was not drafted against: the same command, one step behind. */
  function stale(cmd: RepairCommand): RepairCommand {
    const e = cmd.expected as Record<string, unknown>;
    const expected =
      'version' in e
        ? { ...e, version: (e.version as number) + 1 }
        : 'attempts' in e
          ? { ...e, attempts: (e.attempts as number) + 1 }
          : 'stepAttempts' in e
            ? { ...e, stepAttempts: (e.stepAttempts as number) + 1 }
            : { ...e, runStatus: e.runStatus === 'Waiting' ? 'Running' : 'Waiting' };
    return { ...cmd, expected, idempotencyKey: randomUUID() } as RepairCommand;
  }

  /** The four guarantees, in order; returns the applied result and the tables before and after it. */
  async function proveCommand(cmd: RepairCommand) {
    const before = await snapshotTables(t.db);
    const preview = await t.engine.repairs.preview(cmd);
    expect(await snapshotTables(t.db), 'a preview writes nothing').toEqual(before);
    expect(preview, JSON.stringify(preview.actual)).toMatchObject({
      expectedHolds: true,
      applicable: true,
      blockers: [],
    });

    const staleCmd = stale(cmd);
    const conflict = await t.engine.repairs.apply(staleCmd).then(
      () => null,
      (e: unknown) => e,
    );
    expect(conflict).toBeInstanceOf(EngineError);
    expect(conflict).toMatchObject({ code: 'repair_conflict', details: { current: preview.actual } });
    const afterStale = await snapshotTables(t.db);
    expect(without(afterStale, 'repair_commands'), 'a stale expected state changes nothing').toEqual(
      without(before, 'repair_commands'),
    );
    expect(addedRows(before, afterStale, 'repair_commands')).toMatchObject([
      { command: cmd.kind, status: 'conflict', idempotency_key: staleCmd.idempotencyKey },
    ]);

    const applied: RepairResult = await t.engine.repairs.apply(cmd);
    expect(applied).toMatchObject({ status: 'applied', replayed: false, kind: cmd.kind });
    expect(applied.effects, 'apply does what the preview said').toEqual(preview.effects);
    const after = await snapshotTables(t.db);
    const audit = addedRows(afterStale, after, 'repair_commands');
    expect(audit).toMatchObject([
      { id: applied.id, command: cmd.kind, status: 'applied', actor: who.actor, reason: who.reason },
    ]);
    // What the preview listed is what landed: jobs, signals, outbox rows and history rows.
    expect(addedRows(afterStale, after, 'jobs')).toHaveLength(applied.effects.jobs.length);
    expect(addedRows(afterStale, after, 'signals')).toHaveLength(applied.effects.signals.length);
    // New outbox rows, by id: a requeue changes a row it does not add (its change is in the transitions).
    const outboxIds = (snap: Record<string, string>) =>
      new Set((JSON.parse(snap.outbox ?? '[]') as { id: string }[]).map((r) => r.id));
    const queued = [...outboxIds(after)].filter((id) => !outboxIds(afterStale).has(id));
    expect(queued).toHaveLength(applied.effects.outboxMessages.length);
    if ('runId' in cmd.target) {
      const events = (addedRows(afterStale, after, 'flow_events') as { type: string; data: { repair?: string } }[]).map(
        (e) => e.type,
      );
      expect(events).toContain('repair.applied');
      for (const h of applied.effects.history.filter((x) => !x.includes('(child'))) expect(events).toContain(h);
    } else if ('instanceId' in cmd.target) {
      const rows = addedRows(afterStale, after, 'process_transitions') as { outcome: string }[];
      expect(rows.map((r) => r.outcome)).toContain('repair');
    }

    const again = await t.engine.repairs.apply(cmd);
    expect(again).toMatchObject({ id: applied.id, replayed: true, status: 'applied', effects: applied.effects });
    expect(await snapshotTables(t.db), 'a replayed idempotency key has no second effect').toEqual(after);
    return { applied, before, after };
  }

  return {
    /** The file's test engine, open from its beforeAll on. */
    get t() {
      return t;
    },
    who,
    parkedRun,
    waitingRun,
    ticketAt,
    quarantinedTicket,
    runCmd,
    stepCmd,
    instanceCmd,
    proveCommand,
  };
}
