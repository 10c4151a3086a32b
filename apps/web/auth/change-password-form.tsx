'use client';

import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';

/**
 * The signed-in operator changes its own password (auth.changePassword, ADR 0111): the current one,
 * the new one twice. This session stays signed in; the operator's other sessions end.
 */
export function ChangePasswordForm() {
  const trpc = useTRPC();
  const [currentPassword, setCurrent] = useState('');
  const [newPassword, setNew] = useState('');
  const [repeated, setRepeated] = useState('');
  const [mismatch, setMismatch] = useState(false);
  const change = useMutation(
    trpc.auth.changePassword.mutationOptions({
      onSuccess: () => {
        setCurrent('');
        setNew('');
        setRepeated('');
      },
    }),
  );
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    const differs = newPassword !== repeated;
    setMismatch(differs);
    if (!differs) change.mutate({ currentPassword, newPassword });
  };
  const failure = change.isError ? apiErrorInfo(change.error) : null;
  const ended = change.data?.otherSessionsEnded ?? 0;
  return (
    <form className="panel sign-in" onSubmit={onSubmit} aria-labelledby="change-password-title">
      <h1 id="change-password-title">Change password</h1>
      <label>
        Current password
        <input
          name="currentPassword"
          type="password"
          autoComplete="current-password"
          required
          value={currentPassword}
          onChange={(e) => setCurrent(e.target.value)}
        />
      </label>
      <label>
        New password
        <input
          name="newPassword"
          type="password"
          autoComplete="new-password"
          required
          minLength={12}
          aria-describedby="new-password-rule"
          value={newPassword}
          onChange={(e) => setNew(e.target.value)}
        />
      </label>
      <p id="new-password-rule" className="muted">
        At least 12 characters.
      </p>
      <label>
        Repeat the new password
        <input
          name="repeatedPassword"
          type="password"
          autoComplete="new-password"
          required
          value={repeated}
          onChange={(e) => setRepeated(e.target.value)}
        />
      </label>
      {mismatch ? (
        <p className="notice notice-bad" role="alert" data-testid="change-password-error">
          The two new passwords differ.
        </p>
      ) : failure ? (
        <p className="notice notice-bad" role="alert" data-testid="change-password-error">
          {failure.httpStatus === 403
            ? 'The current password is wrong; nothing changed.'
            : `Could not change the password: ${failure.message}`}
        </p>
      ) : change.isSuccess ? (
        <p className="notice" role="status" data-testid="change-password-done">
          Password changed.{' '}
          {ended === 0 ? 'You had no other sessions.' : `${ended} other session${ended === 1 ? '' : 's'} signed out.`}
        </p>
      ) : null}
      <p className="actions">
        <button type="submit" className="primary" disabled={change.isPending}>
          {change.isPending ? 'Changing…' : 'Change password'}
        </button>
      </p>
    </form>
  );
}
