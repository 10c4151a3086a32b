'use client';

import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useRoleAllows } from '@/auth/use-session';
import { RepairDraftPanel } from '@/repairs/repair-draft-panel';
import { newKey, type DraftCommand } from '@/repairs/repair-draft-types';
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
  const [draft, setDraft] = useState<{ command: DraftCommand; title: string } | null>(null);
  const safe = run.safeRepairs as readonly string[];
  const kinds = buttonRepairs.filter((k) => safe.includes(k));
  // An open draft stays while the run moves on (polling), so its outcome or conflict is still shown.
  if (!canRepair || (safe.length === 0 && draft === null)) return null;
  const start = (command: DraftCommand) => setDraft({ command, title: repairLabels[command.kind] ?? command.kind });
  return (
    <section id="repairs" data-testid="run-repairs">
      <h2>Repairs</h2>
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
          onRedraft={(next) => setDraft({ ...draft, command: next })}
          onClose={() => setDraft(null)}
          onApplied={() => void queryClient.invalidateQueries(trpc.runs.get.pathFilter())}
        />
      ) : null}
    </section>
  );
}
