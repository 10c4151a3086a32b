import { describe, expect, it } from 'vitest';
import { outboxRequeueBulk, type OutboxRowShown } from './outbox-requeue-bulk';

const row = (id: string, status: string, attempts = 3): OutboxRowShown => ({
  id,
  messageId: `demo.fulfilment/payment-${id}/0`,
  type: 'ReserveInventory',
  destination: 'demo.inventory',
  status,
  attempts,
  sourceKind: 'process',
  sourceId: `instance-of-${id}`,
});

describe('outboxRequeueBulk', () => {
  it('drafts each ticked Dead row against the status and attempts shown, under one key', () => {
    const rows = [row('a', 'Dead', 1), row('b', 'Dead', 5), row('c', 'Dead')];
    const draft = outboxRequeueBulk(rows, new Set(['a', 'b']), 'k1');
    expect(draft).toMatchObject({ kind: 'outbox.requeue', idempotencyKey: 'k1', noun: 'outbox row', params: {} });
    expect(draft.items.map((i) => [i.target, i.expected, i.href])).toEqual([
      [{ outboxId: 'a' }, { status: 'Dead', attempts: 1 }, '/instances/instance-of-a#outbox'],
      [{ outboxId: 'b' }, { status: 'Dead', attempts: 5 }, '/instances/instance-of-b#outbox'],
    ]);
    expect(draft.items[0]?.label).toBe('ReserveInventory to demo.inventory, message demo.fulfilment/payment-a/0');
    expect(draft.leftOut.count).toBe(0);
  });

  it('leaves out, with why, ticked rows that are not Dead any more and ticked rows no longer shown', () => {
    const rows = [row('a', 'Dead'), row('b', 'Pending', 0), row('c', 'Published', 1), row('d', 'Dead')];
    const draft = outboxRequeueBulk(rows, new Set(['a', 'b', 'c', 'gone']), 'k2');
    expect(draft.items.map((i) => i.id)).toEqual(['a']);
    expect(draft.leftOut).toEqual({
      count: 3,
      why: '2 are not Dead any more (now Pending or Published): nothing to requeue; 1 left this list after it was ticked',
    });
    expect(outboxRequeueBulk(rows, new Set(['b']), 'k3').leftOut.why).toBe(
      '1 is not Dead any more (now Pending): nothing to requeue',
    );
  });
});
