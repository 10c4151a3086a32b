'use client';

import { apiErrorInfo } from '@/trpc/api-error';
import { ErrorPanel } from './error-panel';
import { formatMoment } from './format-time';
import { PendingNotice } from './pending-notice';
import { StaleBanner } from './stale-banner';

/** The parts of a tanstack query result a refreshing page shows the state of. */
export interface LiveQuery {
  dataUpdatedAt: number;
  isPending: boolean;
  isError: boolean;
  error: unknown;
  data: unknown;
  failureCount: number;
  failureReason: unknown;
  refetch: () => Promise<unknown>;
}

/**
 * The head of a page that refreshes on its own: the stale banner, the title with "Refreshing every
 * N s · updated HH:MM:SS", then loading (with why it is slow) or the error with a retry, worded for
 * a first load or a failing refresh over data still shown.
 */
export function LivePageHead({
  title,
  query,
  refreshMs,
  what,
}: {
  title: string;
  query: LiveQuery;
  refreshMs: number;
  /** What the page shows, for the messages: "the audit trail", "definitions". */
  what: string;
}) {
  return (
    <>
      <StaleBanner updatedAt={query.dataUpdatedAt} intervalMs={refreshMs} />
      <div className="page-head">
        <h1>{title}</h1>
        <span className="muted" data-testid="last-updated">
          {query.dataUpdatedAt
            ? `Refreshing every ${refreshMs / 1000} s · updated ${formatMoment(query.dataUpdatedAt)}`
            : null}
        </span>
      </div>
      {query.isPending ? (
        <PendingNotice
          label={`Loading ${what}…`}
          failureCount={query.failureCount}
          failureReason={query.failureReason}
        />
      ) : null}
      {query.isError ? (
        <ErrorPanel
          title={query.data ? `Refresh is failing: ${what} below may be out of date` : `Could not load ${what}`}
          onRetry={() => void query.refetch()}
        >
          <p>{apiErrorInfo(query.error).message}</p>
        </ErrorPanel>
      ) : null}
    </>
  );
}
