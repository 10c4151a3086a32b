'use client';

import { useQueryClient } from '@tanstack/react-query';
import { useRef } from 'react';
import { useRoleAllows } from '@/auth/use-session';
import { useDraftOpener } from '@/repairs/draft-focus';
import { RepairDraftPanel } from '@/repairs/repair-draft-panel';
import { newKey, type DraftCommand } from '@/repairs/repair-draft-types';
import { isOneDraft, useKeptDraft, type OneDraft } from '@/repairs/use-kept-draft';
import type { RunDetail } from '@/trpc/api-types';
import { useTRPC } from '@/trpc/trpc-context';
import { RunRepairForms } from './run-repair-forms';

/** The repairs that take no parameters: one click drafts them. */
const buttonRepairs = ['run.kick', 'run.cancel', 'run.expire', 'run.terminate'] as const;
export const repairLabels: Record<string, string> = {
  'run.kick': 'Kick',
  'run.cancel': 'Cancel (with compensation)',
  'run.expire': 'Expire now',
  'run.terminate': 'Terminate (no compensation)',
  'run.signal': 'Send a signal',
  'run.retry_step': 'Retry a step',
  'run.reclaim_step': 'Reclaim a step whose worker is gone',
  'run.complete_step': 'Complete a step by hand',
  'run.resume_from_step': 'Resume from a step',
};

/**
 * The run's safe repairs (by its status and stuck reason), for operators only: the parameterless
 * ones as buttons, the others (signal, step commands) as forms. Whatever is drafted is previewed,
 * needs a reason, and is applied against the state shown; a rejection offers a redraft.
 */
export function RunRepairs({
  run,
  steps,
  compensations,
}: {
  run: RunDetail['run'];
  steps: RunDetail['actions'];
  compensations: RunDetail['compensations'];
}) {
  const canRepair = useRoleAllows('operator');
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const heading = useRef<HTMLHeadingElement>(null);
  const opener = useDraftOpener(heading);
  // The open, unapplied draft is kept in this tab under the run's page, with its reason as typed, so a
  // session that ends under it does not lose it (ADR 0117, use-kept-draft.ts).
  const kept = useKeptDraft(
    'repairs',
    (d): d is OneDraft => isOneDraft(d) && 'runId' in d.command.target && d.command.target.runId === run.id,
  );
  const open = kept.open;
  const safe = run.safeRepairs as readonly string[];
  const kinds = buttonRepairs.filter((k) => safe.includes(k));
  // An open draft stays while the run moves on (polling), so its outcome or conflict is still shown.
  if (!canRepair || (safe.length === 0 && open === null)) return null;
  const start = (command: DraftCommand) => {
    opener.remember();
    kept.start({ command, title: repairLabels[command.kind] ?? command.kind });
  };
  return (
    <section id="repairs" data-testid="run-repairs">
      <h2 ref={heading} tabIndex={-1}>
        Repairs
      </h2>
      <div className="repair-buttons">
        {kinds.map((kind) => (
          <button
            key={kind}
            type="button"
            data-testid={`repair-${kind}`}
            onClick={() =>
              start({
                kind,
                target: { runId: run.id },
                expected: { runStatus: run.status },
                idempotencyKey: newKey(),
                params: {},
              })
            }
          >
            {repairLabels[kind]}
          </button>
        ))}
      </div>
      <RunRepairForms run={run} steps={steps} compensations={compensations} safe={safe} onDraft={start} />
      {open ? (
        <RepairDraftPanel
          key={open.draft.command.idempotencyKey}
          draft={open.draft.command}
          title={open.draft.title}
          noun={
            'stepSequence' in open.draft.command.target || 'compensation' in open.draft.command.target ? 'step' : 'run'
          }
          onRedraft={(next) => kept.start({ command: next, title: open.draft.title })}
          onClose={() => {
            opener.returnFocus();
            kept.close();
          }}
          onApplied={() => void queryClient.invalidateQueries(trpc.runs.get.pathFilter())}
          initialReason={open.initialReason}
          onReasonChange={kept.reasonChanged}
          onSent={kept.sent}
          restored={open.restored}
        />
      ) : null}
    </section>
  );
}
