'use client';

import type { UseQueryResult } from '@tanstack/react-query';
import Link from 'next/link';
import type { ReactNode } from 'react';
import { apiErrorInfo } from '@/trpc/api-error';
import { formatMoment } from './format-time';
import { PendingNotice } from './pending-notice';

/**
 * The frame of a detail page over one polled query: a link back to the list, a pending notice while
 * it loads, the page's own load error when nothing came back, and — once data came — a notice when a
 * refresh fails (the page then shows the data it has, saying how old it is).
 */
export function DetailFrame<T, E>({
  back,
  query,
  pendingLabel,
  loadError,
  children,
}: {
  back: { href: string; label: string };
  query: UseQueryResult<T, E>;
  pendingLabel: string;
  loadError: (error: E | null, retry: () => void) => ReactNode;
  children: (data: T) => ReactNode;
}) {
  const crumbs = (
    <p className="crumbs">
      <Link href={back.href}>← {back.label}</Link>
    </p>
  );
  const retry = () => void query.refetch();
  if (query.isPending)
    return (
      <>
        {crumbs}
        <PendingNotice label={pendingLabel} failureCount={query.failureCount} failureReason={query.failureReason} />
      </>
    );
  if (query.data === undefined)
    return (
      <>
        {crumbs}
        {loadError(query.error, retry)}
      </>
    );
  return (
    <>
      {crumbs}
      {query.isError ? (
        <p className="notice notice-bad" role="alert">
          Refresh failed at {formatMoment(query.errorUpdatedAt)}; showing data from {formatMoment(query.dataUpdatedAt)}.{' '}
          {apiErrorInfo(query.error).message}{' '}
          <button type="button" onClick={retry}>
            Try again
          </button>
        </p>
      ) : null}
      {children(query.data)}
    </>
  );
}
