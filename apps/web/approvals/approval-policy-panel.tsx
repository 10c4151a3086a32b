'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useRoleAllows } from '@/auth/use-session';
import type { ApprovalPolicyView } from '@/trpc/api-types';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';

/** The approval policy: read by everyone signed in, edited by an admin (each change is audited). */
export function ApprovalPolicyPanel() {
  const trpc = useTRPC();
  const isAdmin = useRoleAllows('admin');
  const policy = useQuery(trpc.approvalPolicy.get.queryOptions());
  const catalogue = useQuery(trpc.repairs.catalogue.queryOptions());
  return (
    <section className="panel" data-testid="approval-policy">
      <h2>Approval policy</h2>
      {policy.isError ? <p className="notice notice-bad">{apiErrorInfo(policy.error).message}</p> : null}
      {policy.data && catalogue.data ? (
        isAdmin ? (
          <PolicyForm
            key={policy.data.updatedAt ?? 'default'}
            policy={policy.data}
            kinds={Object.keys(catalogue.data)}
          />
        ) : (
          <PolicySummary policy={policy.data} />
        )
      ) : null}
      {!isAdmin ? <p className="muted">Only an admin changes the policy.</p> : null}
    </section>
  );
}

function PolicySummary({ policy }: { policy: ApprovalPolicyView }) {
  return (
    <p data-testid="approval-policy-summary">
      {policy.gatedCommands.length > 0 ? (
        <>
          Waits for a second operator:{' '}
          {policy.gatedCommands.map((k, i) => (
            <span key={k}>
              {i > 0 ? ', ' : ''}
              <code>{k}</code>
            </span>
          ))}
        </>
      ) : (
        'No command kind waits for approval'
      )}
      {policy.bulkThreshold !== null
        ? `; any bulk repair over ${policy.bulkThreshold} targets.`
        : '; bulk repairs do not.'}{' '}
      <span className="muted">{policy.isDefault ? '(the default policy)' : `(set by ${policy.updatedBy ?? '?'})`}</span>
    </p>
  );
}

function PolicyForm({ policy, kinds }: { policy: ApprovalPolicyView; kinds: string[] }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [gated, setGated] = useState<ReadonlySet<string>>(new Set(policy.gatedCommands));
  const [threshold, setThreshold] = useState(policy.bulkThreshold === null ? '' : String(policy.bulkThreshold));
  const save = useMutation(
    trpc.approvalPolicy.set.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries(trpc.approvalPolicy.get.pathFilter()),
    }),
  );
  return (
    <form
      data-testid="approval-policy-form"
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate({
          gatedCommands: [...gated],
          bulkThreshold: threshold.trim() === '' ? null : Number(threshold),
        });
      }}
    >
      <PolicySummary policy={policy} />
      <fieldset>
        <legend>Commands that wait for a second operator</legend>
        {kinds.map((k) => (
          <label key={k} className="policy-kind">
            <input
              type="checkbox"
              checked={gated.has(k)}
              onChange={(e) => {
                const next = new Set(gated);
                if (e.target.checked) next.add(k);
                else next.delete(k);
                setGated(next);
              }}
            />{' '}
            <code>{k}</code>
          </label>
        ))}
      </fieldset>
      <label>
        A bulk repair over this many targets waits too (empty: never){' '}
        <input
          type="number"
          min={0}
          max={1000}
          value={threshold}
          onChange={(e) => setThreshold(e.target.value)}
          data-testid="approval-policy-threshold"
        />
      </label>{' '}
      <button type="submit" className="primary" disabled={save.isPending}>
        {save.isPending ? 'Saving…' : 'Save policy'}
      </button>
      {save.isError ? (
        <p className="notice notice-bad" role="alert">
          {apiErrorInfo(save.error).message}
        </p>
      ) : null}
      {save.isSuccess ? (
        <p className="notice notice-ok" role="status">
          Saved; the change is in the audit trail.
        </p>
      ) : null}
    </form>
  );
}
