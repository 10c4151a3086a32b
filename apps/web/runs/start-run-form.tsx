'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { useId, useState } from 'react';
import { formInput, SchemaForm } from '@/repairs/schema-form';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';

/**
 * Starts a run of any registered flow. The input form is generated from the flow's JSON Schema when
 * it declares one (a JSON editor otherwise); the engine validates the input again, and a refusal
 * shows the field it names (`input.input.amount: ...`).
 */
export function StartRunForm() {
  const trpc = useTRPC();
  const ids = useId();
  const queryClient = useQueryClient();
  const flows = useQuery(trpc.runs.flows.queryOptions());
  const [flowName, setFlowName] = useState('');
  const [values, setValues] = useState<Record<string, string>>({});
  const [businessKey, setBusinessKey] = useState('');
  const [formError, setFormError] = useState<string | null>(null);
  const start = useMutation(
    trpc.runs.start.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries(trpc.runs.page.pathFilter()),
    }),
  );
  const flow = flows.data?.find((f) => f.name === flowName);
  return (
    <form
      className="start-run-form"
      data-testid="start-run-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (!flow) return;
        const input = formInput(flow.inputSchema, values);
        if (!input.ok) return setFormError(input.error);
        setFormError(null);
        start.mutate({
          flowName: flow.name,
          input: input.value,
          ...(businessKey.trim() === '' ? {} : { businessKey: businessKey.trim() }),
          tags: ['console'],
        });
      }}
    >
      <h2 className="small-heading">Start a run</h2>
      <label htmlFor={`${ids}-flow`}>Flow</label>{' '}
      <select
        id={`${ids}-flow`}
        data-testid="start-run-flow"
        value={flowName}
        onChange={(e) => {
          setFlowName(e.target.value);
          setValues({});
          start.reset();
        }}
      >
        <option value="">—</option>
        {(flows.data ?? []).map((f) => (
          <option key={f.name} value={f.name}>
            {f.name} v{f.version}
          </option>
        ))}
      </select>
      {flow ? (
        <>
          <SchemaForm schema={flow.inputSchema} values={values} onChange={setValues} testId="start-run-input" />
          <div className="field">
            <label htmlFor={`${ids}-key`}>Business key (optional)</label>{' '}
            <input
              id={`${ids}-key`}
              data-testid="start-run-business-key"
              value={businessKey}
              onChange={(e) => setBusinessKey(e.target.value)}
            />
          </div>
          <button type="submit" className="primary" data-testid="start-run-submit" disabled={start.isPending}>
            {start.isPending ? 'Starting…' : `Start ${flow.name}`}
          </button>
        </>
      ) : null}
      {flows.isError ? (
        <p className="notice notice-bad" role="alert">
          Could not list the flows: {apiErrorInfo(flows.error).message}
        </p>
      ) : null}
      {formError ? (
        <p className="notice notice-bad" role="alert" data-testid="start-run-error">
          {formError}
        </p>
      ) : null}
      {start.isError ? (
        <p className="notice notice-bad" role="alert" data-testid="start-run-error">
          Refused: {apiErrorInfo(start.error).message}
        </p>
      ) : null}
      {start.isSuccess ? (
        <p className="notice notice-ok" role="status">
          Started run <code>{start.data.runId}</code>.{' '}
          <Link href={`/runs/${start.data.runId}`} data-testid="start-run-link">
            Open it →
          </Link>
        </p>
      ) : null}
    </form>
  );
}
