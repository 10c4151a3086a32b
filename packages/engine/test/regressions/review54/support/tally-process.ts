import { z } from 'zod';
import type { Database } from '../../../../src/db/database.ts';
import { defineProcess } from '../../../../src/index.ts';

/**
 * Review 54: a small process whose every applied message and fired timeout leaves a trace that
 * counts: `total` adds each Add's `n`, `nudges` counts each Nudge, and each emits one command.
 * Applied twice shows as a wrong total, a second transition or a second outbox row.
 */
export const tallyProcess = defineProcess({
  name: 'r54-tally',
  states: ['Open', 'Done'],
  initial: 'Open',
  final: ['Done'],
  data: z.object({ key: z.string(), total: z.number(), nudges: z.number() }),
  initialData: (key) => ({ key, total: 0, nudges: 0 }),
  messages: {
    Begin: z.object({ key: z.string() }),
    Add: z.object({ key: z.string(), n: z.number() }),
  },
  correlate: (m) => m.payload.key,
  timeouts: { Nudge: { afterMs: 1000, expects: 'Open' } },
  on: {
    Begin: [{ from: 'Open', to: 'Open', schedule: ['Nudge'] }],
    Add: [
      {
        from: 'Open',
        to: 'Open',
        then: (d, p) => ({
          data: { ...d, total: d.total + p.n },
          emit: [{ type: 'Added', destination: 'ledger', payload: { key: d.key, n: p.n } }],
        }),
      },
    ],
    Nudge: [
      {
        from: 'Open',
        to: 'Open',
        then: (d) => ({
          data: { ...d, nudges: d.nudges + 1 },
          emit: [{ type: 'Nudged', destination: 'ledger', payload: { key: d.key } }],
        }),
      },
    ],
  },
});

/** What the database says about each message id: its applied transitions, inbox rows and outbox rows. */
export async function tracesOf(db: Database, messageIds: readonly string[]) {
  const rows = await db.pool!.query<{ message_id: string; applied: number; inbox: number; outbox: number }>(
    `select m.id as message_id,
            (select count(*)::int from "sagaflow"."process_transitions" t where t.message_id = m.id and t.outcome = 'applied') as applied,
            (select count(*)::int from "sagaflow"."inbox" i where i.consumer = 'r54-tally' and i.message_id = m.id) as inbox,
            (select count(*)::int from "sagaflow"."outbox" o where o.headers->>'sagaflow-causation-id' = m.id) as outbox
       from unnest($1::text[]) m(id)`,
    [messageIds],
  );
  return rows.rows;
}
