'use client';

import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useRoleAllows } from '@/auth/use-session';
import { BulkDraftPanel } from '@/repairs/bulk-draft-panel';
import { useDraftOpener } from '@/repairs/draft-focus';
import { RepairDraftPanel } from '@/repairs/repair-draft-panel';
import { newKey } from '@/repairs/repair-draft-types';
import { isBulkDraft, isOneDraft, useKeptDraft, type OneDraft } from '@/repairs/use-kept-draft';
import { useTRPC } from '@/trpc/trpc-context';
import { ScrollBox } from '@/ui/scroll-box';
import { AllSelectBox, RowSelectBox } from '@/ui/select-box';
import { Timestamp } from '@/ui/timestamp';
import type { InstanceDetail } from './instance-types';
import { OutboxRequeueBar } from './outbox-requeue-bar';

type OutboxRow = InstanceDetail['outbox'][number];

/**
 * The outbox rows the instance emitted, newest first: what, where, and whether it was published. A
 * Dead row (it used up its attempts) shows why, and an operator can requeue it once its downstream
 * is fixed (ADR 0104): the repair draft panel previews it, asks for a reason, and applies it (or
 * sends it for approval) against the status and attempts shown. Several Dead rows can be ticked (or
 * every Dead row shown) and requeued as one bulk, with the same preview, reason, apply and approval.
 */
export function InstanceOutbox({ outbox, now }: { outbox: InstanceDetail['outbox']; now: number }) {
  const canRepair = useRoleAllows('operator');
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  // A row's draft and the bulk draft are each kept in this tab while open (use-kept-draft.ts).
  const kept = useKeptDraft(
    'outbox',
    (d): d is OneDraft =>
      isOneDraft(d) &&
      'outboxId' in d.command.target &&
      outbox.some((o) => o.id === (d.command.target as { outboxId: string }).outboxId),
  );
  const draft = kept.open;
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const keptBulk = useKeptDraft('outbox-bulk', isBulkDraft);
  const bulk = keptBulk.open;
  const opener = useDraftOpener();
  const requeue = (o: OutboxRow) => {
    opener.remember();
    kept.start({
      command: {
        kind: 'outbox.requeue',
        target: { outboxId: o.id },
        expected: { status: o.status, attempts: o.attempts },
        params: {},
        idempotencyKey: newKey(),
      },
      title: `Requeue ${o.type} to ${o.destination}`,
    });
  };
  const deadIds = outbox.filter((o) => o.status === 'Dead').map((o) => o.id);
  const dead = deadIds.length;
  // A tick box for each Dead row once there is one; a ticked row that stops being Dead keeps its tick (left out).
  const ticking = canRepair && (dead > 0 || selected.size > 0);
  return (
    <section id="outbox" data-testid="instance-outbox">
      <h2>Outbox</h2>
      {dead > 0 ? (
        <p className="notice notice-warn" data-testid="dead-outbox-notice">
          {dead === 1 ? '1 message is Dead' : `${dead} messages are Dead`}: it used up its attempts and was not sent.
          {canRepair
            ? ' Once its destination is fixed, requeue it: it goes out again, with the same message id, on the next publisher pass.'
            : ' An operator can requeue it once its destination is fixed.'}
        </p>
      ) : null}
      {canRepair ? (
        <OutboxRequeueBar rows={outbox} selected={selected} onSelect={setSelected} onDraft={keptBulk.start} />
      ) : null}
      {bulk ? (
        <BulkDraftPanel
          key={bulk.draft.idempotencyKey}
          draft={bulk.draft}
          onClose={keptBulk.close}
          onApplied={() => setSelected(new Set())}
          initialReason={bulk.initialReason}
          onReasonChange={keptBulk.reasonChanged}
          onSent={keptBulk.sent}
          restored={bulk.restored}
        />
      ) : null}
      {outbox.length === 0 ? (
        <p className="empty">It has emitted no outbox message.</p>
      ) : (
        <ScrollBox label="Outbox rows">
          <table className="table">
            <thead>
              <tr>
                {ticking ? (
                  <th scope="col">
                    <AllSelectBox
                      ids={deadIds}
                      label="Select every Dead row shown"
                      selected={selected}
                      onSelect={setSelected}
                    />
                  </th>
                ) : null}
                <th scope="col">Message</th>
                <th scope="col">To</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                {canRepair ? <th scope="col">Repair</th> : null}
              </tr>
            </thead>
            <tbody>
              {outbox.map((o) => (
                <tr key={o.id} data-testid="outbox-row" data-status={o.status} data-outbox-id={o.id}>
                  {ticking ? (
                    <td>
                      {o.status === 'Dead' || selected.has(o.id) ? (
                        <RowSelectBox
                          id={o.id}
                          label={`Select ${o.type} to ${o.destination}, message ${o.messageId}`}
                          selected={selected}
                          onSelect={setSelected}
                          testId="outbox-select"
                        />
                      ) : null}
                    </td>
                  ) : null}
                  <td>
                    {o.type} <code className="muted">{o.messageId}</code>
                  </td>
                  <td>{o.destination}</td>
                  <td>
                    {o.status === 'Dead' ? <strong className="text-bad">Dead</strong> : o.status}
                    {o.attempts > 1 || o.status === 'Dead'
                      ? ` after ${o.attempts} attempt${o.attempts === 1 ? '' : 's'}`
                      : ''}
                    {o.lastError ? (
                      <span className="text-bad" data-testid="outbox-last-error">
                        {' '}
                        {o.status === 'Dead' ? 'Last error: ' : ''}
                        {o.lastError}
                      </span>
                    ) : null}
                  </td>
                  <td>
                    <Timestamp iso={o.createdAt} now={now} />
                  </td>
                  {canRepair ? (
                    <td>
                      {o.status === 'Dead' ? (
                        <button
                          type="button"
                          data-testid="outbox-requeue"
                          aria-label={`Requeue ${o.type} to ${o.destination}`}
                          onClick={() => requeue(o)}
                        >
                          Requeue
                        </button>
                      ) : null}
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
      {draft ? (
        <RepairDraftPanel
          key={draft.draft.command.idempotencyKey}
          draft={draft.draft.command}
          title={draft.draft.title}
          noun="outbox row"
          onRedraft={(next) => kept.start({ ...draft.draft, command: next })}
          onClose={() => {
            opener.returnFocus();
            kept.close();
          }}
          onApplied={() => void queryClient.invalidateQueries(trpc.instances.get.pathFilter())}
          initialReason={draft.initialReason}
          onReasonChange={kept.reasonChanged}
          onSent={kept.sent}
          restored={draft.restored}
        />
      ) : null}
    </section>
  );
}
