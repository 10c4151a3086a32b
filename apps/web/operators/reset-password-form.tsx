'use client';

import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { OperatorRow } from '@/trpc/api-types';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';
import { useSendOnce } from '@/ui/use-send-once';
import { FormError } from './form-error';
import { PasswordPairFields } from './password-pair-fields';
import { passwordProblem, type FieldProblem } from './password-problem';

const labels = { password: 'New password', repeated: 'Repeat the new password' };

/**
 * An admin sets another operator's password (operators.resetPassword, ADR 0114): typed twice and
 * checked here first; every session of theirs ends, their API tokens stay.
 */
export function ResetPasswordForm({
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
  const [password, setPassword] = useState('');
  const [repeated, setRepeated] = useState('');
  const [problem, setProblem] = useState<FieldProblem | null>(null);
  const reset = useMutation(
    trpc.operators.resetPassword.mutationOptions({
      onSuccess: (r) =>
        onDone(
          `Password of ${r.name} reset; ${r.sessionsEnded} session${r.sessionsEnded === 1 ? '' : 's'} signed out. Their API tokens stay.`,
        ),
      onSettled: once.done,
    }),
  );
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    const found = passwordProblem(password, repeated, labels);
    setProblem(found);
    if (found) {
      reset.reset();
      return;
    }
    if (once.start()) reset.mutate({ name: operator.name, newPassword: password });
  };
  const errorId = `reset-password-error-${operator.id}`;
  return (
    <form
      className="operator-form"
      noValidate
      onSubmit={onSubmit}
      aria-label={`Reset the password of ${operator.name}`}
      data-testid="reset-password-form"
    >
      <p>
        Sets a new password for <strong>{operator.name}</strong>. Every session of theirs ends at once; their API tokens
        stay (revoke one with <code>sagaflow token revoke</code>).
      </p>
      <PasswordPairFields
        labels={labels}
        password={password}
        repeated={repeated}
        onPassword={setPassword}
        onRepeated={setRepeated}
        problem={problem}
        errorId={errorId}
        autoFocus
      />
      <FormError
        id={errorId}
        text={problem?.message ?? (reset.isError ? `Not reset: ${apiErrorInfo(reset.error).message}` : null)}
      />
      <p className="actions">
        <button type="submit" className="primary" disabled={reset.isPending}>
          {reset.isPending ? 'Resetting…' : 'Reset password'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </p>
    </form>
  );
}
