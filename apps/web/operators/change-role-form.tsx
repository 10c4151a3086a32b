'use client';

import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import type { ConsoleRole } from '@/auth/use-session';
import type { OperatorRow } from '@/trpc/api-types';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';
import { useSendOnce } from '@/ui/use-send-once';
import { consoleRoles, roleSummary } from './console-roles';
import { FormError } from './form-error';

/**
 * An admin picks another operator's new role, then confirms it (operators.setRole): it applies from
 * that operator's next request, since roles are read per request.
 */
export function ChangeRoleForm({
  operator,
  onDone,
  onCancel,
}: {
  operator: OperatorRow;
  onDone: (text: string) => void;
  onCancel: () => void;
}) {
  const trpc = useTRPC();
  const once = useSendOnce();
  const [role, setRole] = useState<string>(operator.role);
  const [confirming, setConfirming] = useState(false);
  const change = useMutation(
    trpc.operators.setRole.mutationOptions({
      onSuccess: (r) => onDone(`${r.name} is now ${r.role}; it applies from their next request.`),
      onSettled: once.done,
    }),
  );
  const errorId = `change-role-error-${operator.id}`;
  const error = change.isError ? `Role not changed: ${apiErrorInfo(change.error).message}` : null;
  if (confirming)
    return (
      <form
        className="operator-form"
        aria-label={`Confirm the new role of ${operator.name}`}
        data-testid="change-role-confirm-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (once.start()) change.mutate({ name: operator.name, role: role as ConsoleRole });
        }}
      >
        <p>
          Change <strong>{operator.name}</strong> from {operator.role} to <strong>{role}</strong>? It applies from their
          next request and is kept in the audit trail.
        </p>
        <FormError id={errorId} text={error} />
        <p className="actions">
          <button type="submit" className="primary" disabled={change.isPending} autoFocus>
            {change.isPending ? 'Changing…' : `Make ${operator.name} ${role}`}
          </button>
          <button
            type="button"
            onClick={() => {
              change.reset();
              setConfirming(false);
            }}
          >
            Back
          </button>
        </p>
      </form>
    );
  return (
    <form
      className="operator-form"
      aria-label={`Change the role of ${operator.name}`}
      data-testid="change-role-form"
      onSubmit={(e) => {
        e.preventDefault();
        setConfirming(true);
      }}
    >
      <label>
        New role for {operator.name}
        <select name="role" value={role} onChange={(e) => setRole(e.target.value)} autoFocus>
          {consoleRoles.map((r) => (
            <option key={r} value={r}>
              {roleSummary[r]}
              {r === operator.role ? ' — current' : ''}
            </option>
          ))}
        </select>
      </label>
      <p className="actions">
        <button type="submit" className="primary" disabled={role === operator.role}>
          Change role…
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </p>
    </form>
  );
}
