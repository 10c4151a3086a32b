'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useEffect, useRef, useState } from 'react';
import { useSession } from '@/auth/use-session';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';
import { ErrorPanel } from '@/ui/error-panel';
import { PendingNotice } from '@/ui/pending-notice';
import { useNow } from '@/ui/use-now';
import { NewOperatorForm } from './new-operator-form';
import { OperatorsTable } from './operators-table';
import './operators.css';

/**
 * The operators page (ADR 0114's addendum): an admin sees every operator and changes another's role,
 * disables or enables it, resets its password, or creates a new one; every change is audited by the
 * control plane. Anyone else is told the page needs the admin role, and sees no list and no form.
 */
export function OperatorsPage() {
  const session = useSession();
  const operator = session.data?.operator;
  return (
    <>
      <div className="page-head">
        <h1>Operators</h1>
      </div>
      {session.isPending ? (
        <PendingNotice label="Loading…" failureCount={session.failureCount} failureReason={session.failureReason} />
      ) : session.isError ? (
        <ErrorPanel title="Could not tell who is signed in" onRetry={() => void session.refetch()}>
          <p>{apiErrorInfo(session.error).message}</p>
        </ErrorPanel>
      ) : operator?.role === 'admin' ? (
        <ManageOperators meId={operator.id} />
      ) : (
        <p className="notice notice-warn" role="status" data-testid="operators-refused">
          Managing operators needs the admin role; you are signed in as {operator?.role ?? 'nobody'}. Your own password
          is changed on the <Link href="/account">Account page</Link>.
        </p>
      )}
    </>
  );
}

function ManageOperators({ meId }: { meId: string }) {
  const trpc = useTRPC();
  const now = useNow(30_000);
  const list = useQuery(trpc.operators.list.queryOptions(undefined, { placeholderData: (p) => p }));
  const [outcome, setOutcome] = useState<string | null>(null);
  const outcomeRef = useRef<HTMLParagraphElement>(null);
  // The action's form closed with its answer: the focus goes to the answer, not back to the page's top.
  useEffect(() => {
    if (outcome !== null) outcomeRef.current?.focus();
  }, [outcome]);
  return (
    <>
      <p className="muted">
        An admin changes another operator&apos;s role, disables or enables them, and resets their password; every change
        is kept in the <Link href="/audit">audit trail</Link>. Nobody changes their own account here: your password is
        changed on the <Link href="/account">Account page</Link>, and your role by another admin.
      </p>
      {outcome !== null ? (
        <p className="notice notice-ok" role="status" tabIndex={-1} ref={outcomeRef} data-testid="operators-outcome">
          {outcome}
        </p>
      ) : null}
      {list.isPending ? (
        <PendingNotice label="Loading operators…" failureCount={list.failureCount} failureReason={list.failureReason} />
      ) : null}
      {list.isError ? (
        <ErrorPanel title="Could not load operators" onRetry={() => void list.refetch()}>
          <p>{apiErrorInfo(list.error).message}</p>
        </ErrorPanel>
      ) : null}
      {list.data ? <OperatorsTable operators={list.data} meId={meId} now={now} onOutcome={setOutcome} /> : null}
      <NewOperatorForm />
    </>
  );
}
