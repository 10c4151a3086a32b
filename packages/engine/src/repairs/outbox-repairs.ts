import { countSourceOutboxAfter } from '../store/outbox/count-source-outbox-after.ts';
import { requeueOutboxRow } from '../store/outbox/requeue-outbox-row.ts';
import type { DbOutboxRow } from '../store/outbox/find-outbox-row.ts';
import { EngineError } from '../errors/engine-error.ts';
import type { RepairCommandOf } from './repair-command.ts';
import { noEffects } from './repair-effects.ts';
import type { RepairHandler } from './repair-handler.ts';

/** An outbox repair's target: the row as read (and, in apply, locked). */
export interface OutboxTarget {
  row: DbOutboxRow;
}

const errorShown = 200;

/**
 * Requeues a Dead outbox row (ADR 0104): it goes out again, with the same message id, on the next
 * publisher pass. Only a Dead row: a Pending one is still being sent, a Published one was delivered.
 */
export const requeueRepair: RepairHandler<RepairCommandOf<'outbox.requeue'>, OutboxTarget> = {
  async plan(db, _deps, _cmd, { row }) {
    const effects = noEffects();
    if (row.status !== 'Dead')
      return {
        blockers: [
          row.status === 'Published'
            ? `outbox row ${row.id} is Published: it was delivered, there is nothing to requeue`
            : `outbox row ${row.id} is Pending: the publisher is still sending it, there is nothing to requeue`,
        ],
        field: 'target.outboxId',
        effects,
      };
    effects.transitions.push({ subject: `outbox ${row.id}`, from: 'Dead', to: 'Pending' });
    effects.notes.push(
      `sends ${row.type} to ${row.destination} again on the publisher's next pass, with the same message id ${row.message_id} (consumers dedupe by it)`,
    );
    const lastError =
      row.last_error === null
        ? ''
        : `; its last error is kept: "${row.last_error.length > errorShown ? `${row.last_error.slice(0, errorShown)}…` : row.last_error}"`;
    effects.notes.push(
      `its attempts count again from 0 (it died after ${row.attempts}); if it fails outbox.max_attempts times more it is Dead again${lastError}`,
    );
    const after = await countSourceOutboxAfter(db, { sourceId: row.source_id, seq: row.seq });
    const source = `${row.source_kind === 'process' ? 'instance' : row.source_kind} ${row.source_id}`;
    if (after.published > 0)
      effects.notes.push(
        `${after.published} later message(s) of ${source} were already published: this one arrives after them (the per-source order was broken when it died)`,
      );
    if (after.pending > 0)
      effects.notes.push(
        `${after.pending} later message(s) of ${source} still pending wait behind it, in their order, until it is published or dead again`,
      );
    return { blockers: [], effects };
  },
  async perform(tx, _deps, _cmd, { row }, _prepared, { now }) {
    if (!(await requeueOutboxRow(tx, { id: row.id, now })))
      throw new EngineError('repair_refused', `outbox row ${row.id} is no longer Dead`);
    return {};
  },
};
