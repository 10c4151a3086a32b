import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import { ticket } from '../../repairs/support/repair-fixtures.ts';
import { snapshotTables } from '../../repairs/support/snapshot.ts';

/**
 * ADR 0027: retention deletes a finished instance's transitions and inbox records but keeps the
 * instance row, "what makes a late redelivery of its messages meet a finished instance instead of
 * starting a new one for the same correlation key". A ticket goes Open → Review → Closed (final),
 * ages past the cutoff and is pruned; then the broker redelivers its first two messages. No new
 * instance, no change of the instance, no outbox row, no run: only the ignored messages' records.
 */
describe(`a finished instance's messages redelivered after retention pruned its inbox (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [], actions: [], processes: [ticket] });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  it('a redelivered start message and transition message start nothing and move nothing: only their ignored records are written', async () => {
    const pm = t.engine.processes;
    const key = 'T-1';
    const opened = { id: 'o-T-1', type: 'Opened', payload: { key } };
    const reviewed = { id: 'r-T-1', type: 'Reviewed', payload: { key } };
    const { instanceId } = await pm.deliver(ticket, opened);
    await pm.deliver(ticket, reviewed);
    if (!instanceId) throw new Error('no instance');
    expect(
      await pm.runOperatorCommand(ticket, instanceId, {
        command: 'Close',
        input: { resolution: 'fixed' },
        expectedState: 'Review',
        operator: 'ana',
        reason: 'done',
        idempotencyKey: 'close-T-1',
      }),
    ).toMatchObject({ outcome: 'applied', to: 'Closed' });
    expect((await pm.find(instanceId))?.status).toBe('COMPLETED');

    t.clock.advance(60_000);
    const report = await t.engine.retention.prune({ olderThanSeconds: 10 });
    expect(report.deleted).toMatchObject({ process_transitions: 3, inbox: 3 });

    const before = await snapshotTables(t.db);
    const instance = await pm.find(instanceId);
    const again = [(await pm.deliver(ticket, opened)).outcome, (await pm.deliver(ticket, reviewed)).outcome];
    const after = await snapshotTables(t.db);
    // A message a final state does not accept is recorded as ignored (an inbox row and a from = to
    // transition row, as for any ignored message); nothing else may change.
    const changed = Object.keys(before).filter((table) => before[table] !== after[table]);
    expect({
      again,
      changed,
      instances: await t.db.prisma.sagaInstance.count(),
      instance: await pm.find(instanceId),
    }).toEqual({ again: ['ignored', 'ignored'], changed: ['inbox', 'process_transitions'], instances: 1, instance });
  });
});
