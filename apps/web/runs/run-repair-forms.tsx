'use client';

import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { JsonEditor, parseJsonText } from '@/repairs/json-editor';
import { newKey, type DraftCommand } from '@/repairs/repair-draft-types';
import { formInput, SchemaForm, schemaFields } from '@/repairs/schema-form';
import type { RunDetail } from '@/trpc/api-types';
import { useTRPC } from '@/trpc/trpc-context';
import { stepChoices } from './step-choices';

type Step = RunDetail['actions'][number];
const stepKinds = ['run.retry_step', 'run.reclaim_step', 'run.complete_step', 'run.resume_from_step'] as const;
const stepLabels: Record<(typeof stepKinds)[number], string> = {
  'run.retry_step': 'Retry step',
  'run.reclaim_step': 'Reclaim step or compensation (its worker is gone)',
  'run.complete_step': 'Complete step with this output',
  'run.resume_from_step': 'Resume from step',
};

/**
 * The run's repairs that take parameters, as forms: a signal (name and JSON payload), and the step
 * commands with a step picker (a reclaim's lists the compensations too). complete_step's output is a form generated from the action's output
 * JSON Schema when it declares one (the engine checks it again), a JSON editor otherwise. Each
 * drafts a command against the run's and the chosen step's state as shown.
 */
export function RunRepairForms({
  run,
  steps,
  compensations,
  safe,
  onDraft,
}: {
  run: RunDetail['run'];
  steps: Step[];
  compensations: RunDetail['compensations'];
  safe: readonly string[];
  onDraft: (command: DraftCommand) => void;
}) {
  const ids = useId();
  const [signalName, setSignalName] = useState('');
  const [signalPayload, setSignalPayload] = useState('');
  const [stepKind, setStepKind] = useState<(typeof stepKinds)[number] | ''>('');
  const [choice, setChoice] = useState('');
  const [output, setOutput] = useState('');
  const [outputValues, setOutputValues] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const trpc = useTRPC();
  const actions = useQuery(trpc.runs.actions.queryOptions());
  const offeredSteps = stepKinds.filter((k) => safe.includes(k));
  const choices = stepChoices(stepKind, run.id, steps, compensations);
  const chosen = choices.find((c) => c.value === choice);
  const step = steps.find((s) => `step:${s.sequence}` === choice);
  const outputSchema = step ? actions.data?.find((a) => a.name === step.name)?.outputSchema : undefined;
  // Only an object schema becomes fields; anything else is edited as JSON.
  const schema = outputSchema && schemaFields(outputSchema) ? outputSchema : null;
  if (!safe.includes('run.signal') && offeredSteps.length === 0) return null;
  return (
    <div className="repair-forms">
      {safe.includes('run.signal') ? (
        <form
          className="repair-form"
          data-testid="signal-form"
          onSubmit={(e) => {
            e.preventDefault();
            const payload = parseJsonText(signalPayload);
            if (!payload.ok) return setError(`signal payload: not JSON (${payload.error})`);
            setError(null);
            onDraft({
              kind: 'run.signal',
              target: { runId: run.id },
              expected: { runStatus: run.status },
              idempotencyKey: newKey(),
              params: {
                signal: { name: signalName.trim(), ...(payload.value === undefined ? {} : { payload: payload.value }) },
              },
            });
          }}
        >
          <h3 className="small-heading">Send a signal</h3>
          <label htmlFor={`${ids}-signal`}>Signal name</label>{' '}
          <input
            id={`${ids}-signal`}
            data-testid="signal-name"
            required
            value={signalName}
            onChange={(e) => setSignalName(e.target.value)}
          />
          <JsonEditor
            label="Payload (JSON, optional)"
            value={signalPayload}
            onChange={setSignalPayload}
            testId="signal-payload"
            rows={3}
          />
          <button type="submit" data-testid="draft-signal" disabled={signalName.trim() === ''}>
            Preview signal
          </button>
        </form>
      ) : null}
      {offeredSteps.length > 0 ? (
        <form
          className="repair-form"
          data-testid="step-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (!chosen || stepKind === '') return;
            const parsed = schema ? formInput(schema, outputValues) : parseJsonText(output);
            if (stepKind === 'run.complete_step' && (!parsed.ok || parsed.value === undefined))
              return setError(
                `output${parsed.ok ? ': required' : schema ? `.${parsed.error}` : `: not JSON (${parsed.error})`}`,
              );
            setError(null);
            onDraft({
              kind: stepKind,
              target: chosen.target,
              expected: { runStatus: run.status, ...chosen.expected },
              idempotencyKey: newKey(),
              params: stepKind === 'run.complete_step' && parsed.ok ? { output: parsed.value } : {},
            });
          }}
        >
          <h3 className="small-heading">Repair one step</h3>
          <label htmlFor={`${ids}-kind`}>Command</label>{' '}
          <select
            id={`${ids}-kind`}
            data-testid="step-command"
            value={stepKind}
            onChange={(e) => setStepKind(e.target.value as typeof stepKind)}
          >
            <option value="">—</option>
            {offeredSteps.map((k) => (
              <option key={k} value={k}>
                {stepLabels[k]}
              </option>
            ))}
          </select>{' '}
          <label htmlFor={`${ids}-step`}>{stepKind === 'run.reclaim_step' ? 'Step or compensation' : 'Step'}</label>{' '}
          <select
            id={`${ids}-step`}
            data-testid="step-picker"
            value={choice}
            onChange={(e) => {
              setChoice(e.target.value);
              setOutputValues({});
            }}
          >
            <option value="">—</option>
            {choices.map((c) => (
              <option key={c.value} value={c.value}>
                {c.label}
              </option>
            ))}
          </select>
          {stepKind === 'run.complete_step' && schema ? (
            <SchemaForm schema={schema} values={outputValues} onChange={setOutputValues} testId="step-output-form" />
          ) : stepKind === 'run.complete_step' ? (
            <JsonEditor label="Output (JSON, required)" value={output} onChange={setOutput} testId="step-output" />
          ) : null}
          <button type="submit" data-testid="draft-step" disabled={!chosen || stepKind === ''}>
            Preview
          </button>
        </form>
      ) : null}
      {error ? (
        <p className="notice notice-bad" role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}
