'use client';

import { useMutation } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { dropKeptDraftsNotOf, keptDraftOwners } from '@/repairs/kept-draft';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';

const listed = (names: string[]) =>
  names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;

/**
 * What sign-in says of the repair drafts a session ended with (ADR 0117, ADR 0120): whose they are, since
 * whoever reads it may not be that operator, and that only that operator gets them back.
 */
export function keptDraftNotice(owners: string[]): string {
  const who = listed(owners);
  return owners.length === 1
    ? `Your session has ended. The repair draft ${who} had open was not applied: it is kept in this tab, and its page shows it again, as it was left, after ${who} signs in again. Signing in as someone else drops it.`
    : `Your session has ended. The repair drafts ${who} had open were not applied: they are kept in this tab, and their pages show them again, as they were left, after their operator signs in again. Signing in drops the drafts of the others.`;
}

/**
 * Name and password; on success a full load of the page the operator came from. Drafts another operator
 * left kept in this tab are dropped on signing in (ADR 0120).
 */
export function SignInForm({
  next,
  notice,
  draftKept = false,
}: {
  next: string;
  notice: string | null;
  /** The session ended with a repair draft open (`draft=kept`): the notice names whose, from the tab. */
  draftKept?: boolean;
}) {
  const trpc = useTRPC();
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  // Read after mount: the server has no sessionStorage, and the first render must match its HTML.
  const [owners, setOwners] = useState<string[]>([]);
  useEffect(() => {
    if (draftKept) setOwners(keptDraftOwners());
  }, [draftKept]);
  const shown = owners.length > 0 ? keptDraftNotice(owners) : notice;
  const signIn = useMutation(
    trpc.auth.signIn.mutationOptions({
      onSuccess: (data) => {
        dropKeptDraftsNotOf(data.operator.name);
        // A full load, not a client navigation: every query starts again with the new session.
        window.location.assign(next);
      },
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
      {shown && !failure ? (
        <p className="notice" role="status" data-testid="sign-in-notice">
          {shown}
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
