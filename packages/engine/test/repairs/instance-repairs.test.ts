import { describe, expect, it } from 'vitest';
import { testDbKind } from '../support/test-database.ts';
import { switches } from './support/repair-fixtures.ts';
import { useCatalogue } from './support/catalogue-harness.ts';

/** The process instance commands of the repair catalogue: release (skip, retry), the process's own command, force_transition. How each command is proved: support/catalogue-harness.ts. */
describe(`instance repairs (${testDbKind()})`, () => {
  const c = useCatalogue();
  const { ticketAt, quarantinedTicket, instanceCmd, proveCommand } = c;

  it('instance.release (skip) returns the instance to ACTIVE and keeps the skipped message', async () => {
    const { t } = c;
    switches.poisonFails = true;
    const q = await quarantinedTicket();
    const retry = await t.engine.repairs.preview(instanceCmd('instance.release', q, { mode: 'retry' }));
    expect(retry).toMatchObject({ expectedHolds: true, applicable: false });
    expect(retry.blockers[0]).toMatch(/fails again now \(cannot take note "poison pill"\)/);
    const { applied } = await proveCommand(instanceCmd('instance.release', q, { mode: 'skip' }));
    expect(applied.effects.transitions).toEqual([
      { subject: `instance ${q.id} status`, from: 'QUARANTINED', to: 'ACTIVE' },
    ]);
    expect(await t.engine.processes.find(q.id)).toMatchObject({ status: 'ACTIVE', failure: null });
    const { transitions } = await t.engine.processes.history(q.id);
    expect(transitions.at(-1)?.detail).toMatchObject({ skippedMessage: { payload: { note: 'poison pill' } } });
  });

  it('instance.release (retry) applies the message it stopped on once the cause is fixed', async () => {
    const { t } = c;
    switches.poisonFails = true;
    const q = await quarantinedTicket();
    switches.poisonFails = false;
    const { applied } = await proveCommand(instanceCmd('instance.release', q, { mode: 'retry' }));
    expect(applied.effects.transitions).toEqual([
      { subject: `instance ${q.id} status`, from: 'QUARANTINED', to: 'ACTIVE' },
      { subject: `instance ${q.id}`, from: 'Open', to: 'Open' },
    ]);
    expect(await t.engine.processes.find(q.id)).toMatchObject({
      status: 'ACTIVE',
      state: { notes: ['poison pill'] },
    });
  });

  it("instance.command applies the process definition's own typed operator command", async () => {
    const { t } = c;
    const i = await ticketAt('Review');
    const { applied } = await proveCommand(
      instanceCmd('instance.command', i, { command: 'Close', input: { resolution: 'fixed by hand' } }),
    );
    expect(applied.effects.transitions).toEqual([{ subject: `instance ${i.id}`, from: 'Review', to: 'Closed' }]);
    expect(applied.effects.outboxMessages).toEqual([{ type: 'TicketClosed', destination: 'reviews' }]);
    expect(await t.engine.processes.find(i.id)).toMatchObject({ status: 'COMPLETED', currentState: 'Closed' });
  });

  it('instance.force_transition moves the instance to a named state, keeping its data (admin only)', async () => {
    const { t } = c;
    const i = await ticketAt('Open');
    expect(t.engine.repairs.catalogue['instance.force_transition']).toMatchObject({
      adminOnly: true,
      destructive: true,
    });
    await proveCommand(instanceCmd('instance.force_transition', i, { to: 'Review' }));
    expect(await t.engine.processes.find(i.id)).toMatchObject({ status: 'ACTIVE', currentState: 'Review' });
  });
});
