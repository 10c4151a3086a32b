'use client';

import { useMutation } from '@tanstack/react-query';
import type { OperatorRow } from '@/trpc/api-types';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';
import { useSendOnce } from '@/ui/use-send-once';
import { FormError } from './form-error';

/**
 * An admin confirms disabling another operator (every session of theirs ends at once and they cannot
 * sign in) or enabling one again (operators.setDisabled).
 */
export function SetDisabledForm({
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
  const disable = !operator.disabled;
  const change = useMutation(
    trpc.operators.setDisabled.mutationOptions({
      onSuccess: (r) =>
        onDone(
          r.disabled
            ? `${r.name} is disabled; their sessions ended and they cannot sign in.`
            : `${r.name} is enabled; they can sign in again.`,
        ),
      onSettled: once.done,
    }),
  );
  const verb = disable ? 'Disable' : 'Enable';
  return (
    <form
      className="operator-form"
      aria-label={`${verb} ${operator.name}`}
      data-testid="set-disabled-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (once.start()) change.mutate({ name: operator.name, disabled: disable });
      }}
    >
      <p>
        {disable ? (
          <>
            Disable <strong>{operator.name}</strong>? Every session of theirs ends at once, and they cannot sign in
            until an admin enables them again. Nothing else of theirs is deleted.
          </>
        ) : (
          <>
            Enable <strong>{operator.name}</strong> again? They sign in with their password as before.
          </>
        )}
      </p>
      <FormError
        id={`set-disabled-error-${operator.id}`}
        text={change.isError ? `Not ${disable ? 'disabled' : 'enabled'}: ${apiErrorInfo(change.error).message}` : null}
      />
      <p className="actions">
        <button type="submit" className="primary" disabled={change.isPending} autoFocus>
          {change.isPending ? `${verb.slice(0, -1)}ing…` : `${verb} ${operator.name}`}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </p>
    </form>
  );
}
