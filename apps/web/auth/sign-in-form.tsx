'use client';

import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';

/** Name and password; on success a full load of the page the operator came from. */
export function SignInForm({ next, notice }: { next: string; notice: string | null }) {
  const trpc = useTRPC();
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const signIn = useMutation(
    trpc.auth.signIn.mutationOptions({
      // A full load, not a client navigation: every query starts again with the new session.
      onSuccess: () => window.location.assign(next),
    }),
  );
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    signIn.mutate({ name, password });
  };
  const failure = signIn.isError ? apiErrorInfo(signIn.error) : null;
  return (
    <form className="panel sign-in" onSubmit={onSubmit} aria-labelledby="sign-in-title">
      <h1 id="sign-in-title">Sign in to Sagaflow</h1>
      {notice && !failure ? (
        <p className="notice" role="status" data-testid="sign-in-notice">
          {notice}
        </p>
      ) : null}
      <label>
        Name
        <input
          name="name"
          autoComplete="username"
          autoFocus
          required
          value={name}
          onChange={(e) => setName(e.target.value)}
        />
      </label>
      <label>
        Password
        <input
          name="password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
      </label>
      {failure ? (
        <p className="notice notice-bad" role="alert" data-testid="sign-in-error">
          {failure.httpStatus === 401
            ? 'Wrong name or password.'
            : failure.httpStatus === 429
              ? `${failure.message.charAt(0).toUpperCase()}${failure.message.slice(1)}.`
              : `Could not sign in: ${failure.message}`}
        </p>
      ) : null}
      <p className="actions">
        <button type="submit" className="primary" disabled={signIn.isPending || signIn.isSuccess}>
          {signIn.isPending || signIn.isSuccess ? 'Signing in…' : 'Sign in'}
        </button>
      </p>
    </form>
  );
}
