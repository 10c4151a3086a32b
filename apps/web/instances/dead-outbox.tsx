'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useEffect, useState } from 'react';
import { useRoleAllows } from '@/auth/use-session';
import { isBulkDraft, useKeptDraft } from '@/repairs/use-kept-draft';
import { BulkDraftPanel } from '@/repairs/bulk-draft-panel';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';
import { ScrollBox } from '@/ui/scroll-box';
import { AllSelectBox, RowSelectBox } from '@/ui/select-box';
import { Timestamp } from '@/ui/timestamp';
import { OutboxRequeueBar } from './outbox-requeue-bar';

const refreshMs = 2000;
const shownAtMost = 100;

/**
 * Every Dead outbox row, across instances (the longest dead first, at most 100), under the outbox
 * figures of the instances list: folded until opened, so the list reads nothing while nothing is
 * Dead or nobody looks. After an outage an operator ticks the rows (or every row shown) and requeues
 * them as one bulk (ADR 0104), each against the status and attempts shown; a ticked row that was
 * requeued or sent meanwhile is left out, with why.
 */
export function DeadOutbox({ now }: { now: number }) {
  const trpc = useTRPC();
  const canRepair = useRoleAllows('operator');
  const [open, setOpen] = useState(false);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  // The open bulk draft is kept in this tab while open, so a session ending under it does not lose it (use-kept-draft.ts).
  const keptBulk = useKeptDraft('dead-outbox-bulk', isBulkDraft);
  const bulk = keptBulk.open;
  // A bulk draft offered again after the session ended opens the list it was drafted from.
  const restored = bulk?.restored === true;
  useEffect(() => {
    if (restored) setOpen(true);
  }, [restored]);
  const lag = useQuery(trpc.outbox.lag.queryOptions(undefined, { refetchInterval: refreshMs }));
  const total = lag.data?.dead ?? 0;
  const dead = useQuery(
    trpc.outbox.dead.queryOptions(
      { limit: shownAtMost },
      { refetchInterval: refreshMs, enabled: open && (total > 0 || selected.size > 0 || bulk !== null) },
    ),
  );
  if (total === 0 && !open && bulk === null) return null;
  const rows = dead.data ?? [];
  return (
    <details
      className="dead-outbox"
      data-testid="dead-outbox"
      open={open}
      onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}
    >
      <summary>
        Dead outbox messages ({total}){canRepair ? ': see why they died, requeue them' : ''}
      </summary>
      {dead.isError ? (
        <p className="notice notice-bad" role="alert">
          Could not load the Dead rows: {apiErrorInfo(dead.error).message}
        </p>
      ) : null}
      {total > rows.length && rows.length === shownAtMost ? (
        <p className="muted">
          The {shownAtMost} longest dead of {total}; requeue these and the next ones show.
        </p>
      ) : null}
      {canRepair ? (
        <OutboxRequeueBar rows={rows} selected={selected} onSelect={setSelected} onDraft={keptBulk.start} />
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
      {dead.data && rows.length === 0 ? <p className="empty">No outbox row is Dead now.</p> : null}
      {rows.length > 0 ? (
        <ScrollBox label="Dead outbox rows">
          <table className="table" data-testid="dead-outbox-table">
            <thead>
              <tr>
                {canRepair ? (
                  <th scope="col">
                    <AllSelectBox
                      ids={rows.map((o) => o.id)}
                      label="Select every Dead row shown"
                      selected={selected}
                      onSelect={setSelected}
                    />
                  </th>
                ) : null}
                <th scope="col">Message</th>
                <th scope="col">To</th>
                <th scope="col">From</th>
                <th scope="col">Attempts and last error</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((o) => (
                <tr key={o.id} data-testid="dead-outbox-row" data-outbox-id={o.id}>
                  {canRepair ? (
                    <td>
                      <RowSelectBox
                        id={o.id}
                        label={`Select ${o.type} to ${o.destination}, message ${o.messageId}`}
                        selected={selected}
                        onSelect={setSelected}
                        testId="outbox-select"
                      />
                    </td>
                  ) : null}
                  <td>
                    {o.type} <code className="muted">{o.messageId}</code>
                  </td>
                  <td>{o.destination}</td>
                  <td>
                    {o.sourceKind === 'process' ? (
                      <Link href={`/instances/${o.sourceId}#outbox`} className="mono">
                        instance {o.sourceId.slice(0, 8)}
                      </Link>
                    ) : (
                      <span className="mono">
                        {o.sourceKind} {o.sourceId}
                      </span>
                    )}
                  </td>
                  <td>
                    {o.attempts} attempt{o.attempts === 1 ? '' : 's'}
                    {o.lastError ? <span className="text-bad"> Last error: {o.lastError}</span> : null}
                  </td>
                  <td>
                    <Timestamp iso={o.createdAt} now={now} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      ) : null}
    </details>
  );
}
