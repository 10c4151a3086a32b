'use client';

import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { useRoleAllows, useSession } from '@/auth/use-session';
import { useDraftOpener } from '@/repairs/draft-focus';
import { dropKeptDraft, keepDraft, readKeptDraft } from '@/repairs/kept-draft';
import { RepairDraftPanel } from '@/repairs/repair-draft-panel';
import { newKey, type DraftCommand } from '@/repairs/repair-draft-types';
import type { RunDetail } from '@/trpc/api-types';
import { useTRPC } from '@/trpc/trpc-context';
import { RunRepairForms } from './run-repair-forms';

interface Draft {
  command: DraftCommand;
  title: string;
  /** Offered again after the session ended while it was open. */
  restored?: boolean;
}

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
  const me = useSession().data?.operator.name;
  const [draft, setDraft] = useState<Draft | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const opener = useDraftOpener(heading);
  // The open, unapplied draft is kept in this tab (kept-draft.ts) under the run's page, with its reason as
  // typed, so a session that ends under it does not lose it (review 42).
  const page = `/runs/${run.id}`;
  const reason = useRef('');
  const keep = (d: Draft | null) => {
    if (d && me) keepDraft(page, { command: d.command, title: d.title, reason: reason.current, operator: me });
    else dropKeptDraft(page);
  };
  // Once the operator is known: a draft kept when its session ended comes back (never applied by itself);
  // any other kept draft is stale (the page was left with it open) and is dropped.
  const checked = useRef(false);
  useEffect(() => {
    if (!me || checked.current) return;
    checked.current = true;
    const kept = readKeptDraft(page);
    if (
      kept?.sessionEnded &&
      kept.operator === me &&
      'runId' in kept.command.target &&
      kept.command.target.runId === run.id
    ) {
      reason.current = kept.reason;
      setDraft({ command: kept.command, title: kept.title, restored: true });
      keepDraft(page, { ...kept, sessionEnded: false });
    } else if (kept) dropKeptDraft(page);
  }, [me, page, run.id]);
  // Leaving the page with the draft open (a link, not the session ending) leaves nothing kept behind.
  useEffect(
    () => () => {
      if (!readKeptDraft(page)?.sessionEnded) dropKeptDraft(page);
    },
    [page],
  );
  const safe = run.safeRepairs as readonly string[];
  const kinds = buttonRepairs.filter((k) => safe.includes(k));
  // An open draft stays while the run moves on (polling), so its outcome or conflict is still shown.
  if (!canRepair || (safe.length === 0 && draft === null)) return null;
  const open = (next: Draft) => {
    reason.current = '';
    setDraft(next);
    keep(next);
  };
  const start = (command: DraftCommand) => {
    opener.remember();
    open({ command, title: repairLabels[command.kind] ?? command.kind });
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
      {draft ? (
        <RepairDraftPanel
          key={draft.command.idempotencyKey}
          draft={draft.command}
          title={draft.title}
          noun={'stepSequence' in draft.command.target || 'compensation' in draft.command.target ? 'step' : 'run'}
          onRedraft={(next) => open({ command: next, title: draft.title })}
          onClose={() => {
            opener.returnFocus();
            setDraft(null);
            keep(null);
          }}
          onApplied={() => void queryClient.invalidateQueries(trpc.runs.get.pathFilter())}
          initialReason={draft.restored ? reason.current : ''}
          onReasonChange={(r) => {
            reason.current = r;
            keep(draft);
          }}
          onSent={() => keep(null)}
          restored={draft.restored}
        />
      ) : null}
    </section>
  );
}
