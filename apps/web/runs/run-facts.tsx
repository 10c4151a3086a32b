import type { RunDetail } from '@/trpc/api-types';
import { formatDuration } from '@/ui/format-time';
import { Timestamp } from '@/ui/timestamp';

/** The run's identity, times and (when it has any) deadlines, always in the same places. */
export function RunFacts({ run, open, now }: { run: RunDetail['run']; open: boolean; now: number }) {
  const endedAt = run.finishedAt ? new Date(run.finishedAt).getTime() : now;
  return (
    <dl className="facts">
      <dt>Run id</dt>
      <dd className="mono">{run.id}</dd>
      <dt>Business key</dt>
      <dd className="mono">{run.businessKey ?? '—'}</dd>
      <dt>Tags</dt>
      <dd>{run.tags.length ? run.tags.join(', ') : '—'}</dd>
      <dt>Created</dt>
      <dd>
        <Timestamp iso={run.createdAt} now={now} />
      </dd>
      <dt>Started</dt>
      <dd>
        <Timestamp iso={run.startedAt} now={now} />
      </dd>
      <dt>Finished</dt>
      <dd>
        <Timestamp iso={run.finishedAt} now={now} />
      </dd>
      <dt>Last update</dt>
      <dd>
        <Timestamp iso={run.updatedAt} now={now} />
      </dd>
      <dt>{open ? 'Running for' : 'Took'}</dt>
      <dd>{run.startedAt ? formatDuration(endedAt - new Date(run.startedAt).getTime()) : '—'}</dd>
      {run.expiresAt || run.runTimeoutAt ? (
        <>
          <dt>Deadlines</dt>
          <dd className="deadlines">
            {run.expiresAt ? (
              <span data-testid="run-expires-at" title="The business deadline of the whole run">
                Expires <Timestamp iso={run.expiresAt} now={now} showAge={open} />
              </span>
            ) : null}
            {run.runTimeoutAt ? (
              <span
                data-testid="run-timeout-at"
                title="The engine's backstop: past it the run is closed as TimedOut, without compensation"
              >
                Run timeout <Timestamp iso={run.runTimeoutAt} now={now} showAge={open} />
              </span>
            ) : null}
          </dd>
        </>
      ) : null}
    </dl>
  );
}
