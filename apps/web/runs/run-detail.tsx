'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';
import { formatClock } from '@/ui/format-time';
import { PendingNotice } from '@/ui/pending-notice';
import { useNow } from '@/ui/use-now';
import { EventsTimeline } from './events-timeline';
import { RunHeader } from './run-header';
import { RunLoadError } from './run-load-error';
import { isOpenRun } from './run-statuses';
import { StepsTable } from './steps-table';

/** One run: header, steps and timeline; polls every second until the run reaches a terminal status. */
export function RunDetailView({ id }: { id: string }) {
  const trpc = useTRPC();
  const now = useNow();
  const detail = useQuery(
    trpc.runs.get.queryOptions(
      { id },
      // Poll only a run we have seen and that is still open; a missing run will not appear by polling.
      { refetchInterval: (query) => (query.state.data && isOpenRun(query.state.data.run.status) ? 1000 : false) },
    ),
  );
  const back = (
    <p className="crumbs">
      <Link href="/runs">← All runs</Link>
    </p>
  );
  if (detail.isPending) {
    return (
      <>
        {back}
        <PendingNotice
          label={`Loading run ${id}…`}
          failureCount={detail.failureCount}
          failureReason={detail.failureReason}
        />
      </>
    );
  }
  if (!detail.data) {
    return (
      <>
        {back}
        <RunLoadError id={id} error={detail.error} onRetry={() => void detail.refetch()} />
      </>
    );
  }
  const { run, actions, events } = detail.data;
  return (
    <>
      {back}
      {detail.isError ? (
        <p className="notice notice-bad" role="alert">
          Refresh failed at {formatClock(new Date(detail.errorUpdatedAt).toISOString())}; showing data from{' '}
          {formatClock(new Date(detail.dataUpdatedAt).toISOString())}. {apiErrorInfo(detail.error).message}{' '}
          <button type="button" onClick={() => void detail.refetch()}>
            Try again
          </button>
        </p>
      ) : null}
      <RunHeader run={run} now={now} />
      <section>
        <h2>Steps</h2>
        <StepsTable steps={actions} now={now} />
      </section>
      <section>
        <h2>Events</h2>
        <EventsTimeline events={events} />
      </section>
    </>
  );
}
