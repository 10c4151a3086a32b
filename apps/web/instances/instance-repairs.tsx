'use client';

import { useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { useRoleAllows } from '@/auth/use-session';
import { useDraftOpener } from '@/repairs/draft-focus';
import { RepairDraftPanel } from '@/repairs/repair-draft-panel';
import { newKey } from '@/repairs/repair-draft-types';
import { isOneDraft, useKeptDraft, type OneDraft } from '@/repairs/use-kept-draft';
import { formInput, SchemaForm } from '@/repairs/schema-form';
import { useTRPC } from '@/trpc/trpc-context';
import type { InstanceDetail } from './instance-types';

/**
 * An instance's repairs, for operators: release (retry the message it stopped on, or skip it) while
 * it is quarantined; each of its process's own operator commands as a form generated from the
 * command's JSON Schema; and, for an admin, a forced transition. Each is previewed, needs a reason,
 * and is applied against the state and version shown. A Dead outbox row is requeued from the Outbox
 * section (instance-outbox.tsx); this section points there.
 */
export function InstanceRepairs({ detail }: { detail: InstanceDetail }) {
  const canRepair = useRoleAllows('operator');
  const isAdmin = useRoleAllows('admin');
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const ids = useId();
  // The open, unapplied draft is kept in this tab under the instance's page, like a run's (use-kept-draft.ts).
  const kept = useKeptDraft(
    'repairs',
    (d): d is OneDraft =>
      isOneDraft(d) && 'instanceId' in d.command.target && d.command.target.instanceId === detail.instance.id,
  );
  const draft = kept.open;
  const [openCommand, setOpenCommand] = useState<string | null>(null);
  const [values, setValues] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [forceTo, setForceTo] = useState('');
  const opener = useDraftOpener();
  const { instance, operatorCommands, process } = detail;
  if (!canRepair) return null;
  const base = {
    target: { instanceId: instance.id },
    expected: { state: instance.currentState, version: instance.version },
  };
  const start = (kind: string, params: Record<string, unknown>, title: string) => {
    opener.remember();
    kept.start({ command: { ...base, kind, params, idempotencyKey: newKey() }, title });
  };
  const quarantined = instance.status === 'QUARANTINED';
  const deadOutbox = detail.outbox.filter((o) => o.status === 'Dead').length;
  const accepted = operatorCommands.filter((c) => c.acceptedNow);
  const chosen = accepted.find((c) => c.name === openCommand);
  return (
    <section id="repairs" data-testid="instance-repairs">
      <h2>Repairs</h2>
      {quarantined ? (
        <div className="repair-buttons">
          <button
            type="button"
            data-testid="release-retry"
            onClick={() => start('instance.release', { mode: 'retry' }, 'Release: retry the message it stopped on')}
          >
            Release: retry the message
          </button>
          <button
            type="button"
            data-testid="release-skip"
            onClick={() => start('instance.release', { mode: 'skip' }, 'Release: skip the message it stopped on')}
          >
            Release: skip the message
          </button>
        </div>
      ) : null}
      {accepted.length > 0 ? (
        <div className="repair-buttons">
          {accepted.map((c) => (
            <button
              key={c.name}
              type="button"
              data-testid={`command-${c.name}`}
              aria-expanded={openCommand === c.name}
              onClick={() => {
                setOpenCommand(c.name);
                setValues({});
                setFormError(null);
              }}
            >
              {c.name}…
            </button>
          ))}
        </div>
      ) : null}
      {chosen ? (
        <form
          className="repair-form"
          data-testid="command-form"
          onSubmit={(e) => {
            e.preventDefault();
            const input = formInput(chosen.inputSchema, values);
            if (!input.ok) return setFormError(input.error);
            setFormError(null);
            start('instance.command', { command: chosen.name, input: input.value }, `${chosen.name} (→ ${chosen.to})`);
          }}
        >
          <h3 className="small-heading">
            {chosen.name} <span className="muted">→ {chosen.to}</span>
          </h3>
          {chosen.description ? <p>{chosen.description}</p> : null}
          <SchemaForm schema={chosen.inputSchema} values={values} onChange={setValues} testId="command-input" />
          {formError ? (
            <p className="notice notice-bad" role="alert">
              {formError}
            </p>
          ) : null}
          <button type="submit" data-testid="draft-command">
            Preview
          </button>
        </form>
      ) : null}
      {isAdmin && process.registered && !quarantined && instance.status !== 'COMPLETED' ? (
        <form
          className="repair-form"
          data-testid="force-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (forceTo !== '') start('instance.force_transition', { to: forceTo }, `Force the instance to ${forceTo}`);
          }}
        >
          <label htmlFor={`${ids}-force`}>Force a transition to (admin)</label>{' '}
          <select
            id={`${ids}-force`}
            data-testid="force-to"
            value={forceTo}
            onChange={(e) => setForceTo(e.target.value)}
          >
            <option value="">—</option>
            {process.states.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>{' '}
          <button type="submit" data-testid="draft-force" disabled={forceTo === ''}>
            Preview
          </button>
        </form>
      ) : null}
      {deadOutbox > 0 ? (
        <p className="notice notice-warn" data-testid="dead-outbox-pointer">
          {deadOutbox === 1 ? 'A message it sent is Dead' : `${deadOutbox} messages it sent are Dead`}: requeue{' '}
          {deadOutbox === 1 ? 'it' : 'them'} from <a href="#outbox">its Outbox</a> once the destination is fixed.
        </p>
      ) : null}
      {!quarantined && accepted.length === 0 && !isAdmin && deadOutbox === 0 ? (
        <p className="muted" data-testid="no-instance-repairs">
          No repair applies to it in {instance.currentState} ({instance.status}).
        </p>
      ) : null}
      {draft ? (
        <RepairDraftPanel
          key={draft.draft.command.idempotencyKey}
          draft={draft.draft.command}
          title={draft.draft.title}
          noun="instance"
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
