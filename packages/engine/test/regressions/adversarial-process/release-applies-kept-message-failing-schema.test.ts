import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Database } from '../../../src/db/database.ts';
import { defineProcess } from '../../../src/index.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { newMessageId, newOrderId, processManagerOn } from '../../process/support/process-harness.ts';

/**
 * Issue 5, bad input: "a payload that fails its schema: rejected with a clear error before any write".
 * ADR 0008: a quarantined instance's skipped messages are kept (payload in the history row) and the
 * release applies them. The release re-validates the message the instance STOPPED on
 * (`schema.parse(row.failure_payload)`), but hands every kept message to deliverInTransaction with
 * its stored payload as is: after a deploy that changed the schema, a payload the current schema
 * refuses reaches the transition and its result is saved.
 */
function notebook(version: 1 | 2) {
  const note =
    version === 1
      ? z.object({ key: z.string(), text: z.string() })
      : z.object({ key: z.string(), text: z.string(), author: z.string().min(1) });
  return defineProcess({
    name: 'notebook',
    states: ['Open', 'Closed'],
    initial: 'Open',
    final: ['Closed'],
    data: z.object({ key: z.string(), authors: z.array(z.string()) }),
    initialData: (key) => ({ key, authors: [] }),
    messages: { Note: note },
    correlate: (m) => m.payload.key,
    on: {
      Note: [
        {
          from: 'Open',
          to: 'Open',
          then: (d, p) => {
            // v1 has a bug on "poison" notes; v2 (the fix) also records who wrote each note.
            if (version === 1 && p.text.startsWith('poison')) throw new Error('cannot file this note');
            const author = (p as { author?: string }).author;
            return { data: version === 1 ? d : { ...d, authors: [...d.authors, author as string] } };
          },
        },
      ],
    },
  });
}

describe(`release applies kept messages without checking them against the current schema (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('a kept message whose payload the deployed schema refuses is not applied, and the state still decodes', async () => {
    const clock = new TestClock(new Date('2026-03-01T10:00:00.000Z'));
    const config = { quarantine_after_seconds: 60 };
    const before = processManagerOn(db, { processes: [notebook(1)], config, clock });
    const key = newOrderId();
    const first = await before.pm.deliver('notebook', {
      id: newMessageId('n'),
      type: 'Note',
      payload: { key, text: 'hi' },
    });
    const id = first.instanceId!;
    const poison = { id: newMessageId('poison'), type: 'Note', payload: { key, text: 'poison' } };
    await expect(before.pm.deliver('notebook', poison)).rejects.toThrow('cannot file this note');
    clock.advance(60_000);
    expect((await before.pm.deliver('notebook', poison)).outcome).toBe('quarantined');
    const kept = { id: newMessageId('kept'), type: 'Note', payload: { key, text: 'written before the deploy' } };
    expect((await before.pm.deliver('notebook', kept)).outcome).toBe('skipped_quarantined');

    // Deploy v2: Note now requires an author. The kept payload has none.
    expect((await notebook(2).messages.Note!['~standard'].validate(kept.payload)).issues).toBeDefined();
    const after = processManagerOn(db, { processes: [notebook(2)], config, clock });
    await after.pm
      .release(id, { mode: 'skip', operator: 'ops@example.com', reason: 'poison note dropped' })
      .catch((e: unknown) => e);

    const keptRows = await db.prisma.processTransition.findMany({ where: { instance_id: id, message_id: kept.id } });
    expect.soft(keptRows.map((t) => t.outcome)).not.toContain('applied');
    const found = await after.pm.find(id);
    // Whatever the release did, the stored state must still decode with the deployed schema.
    expect.soft(found?.state).not.toBeNull();
    const raw = await db.prisma.sagaInstance.findUniqueOrThrow({ where: { id } });
    expect(notebook(2).data.safeParse(raw.state).success).toBe(true);
  });
});
