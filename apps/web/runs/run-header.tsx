import type { RunDetail } from '@/trpc/api-types';
import { formatDuration } from '@/ui/format-time';
import { JsonBlock } from '@/ui/json-block';
import { RecordedError } from './recorded-error';
import { StatusBadge } from '@/ui/status-badge';
import { Timestamp } from '@/ui/timestamp';
import { isOpenRun } from './run-statuses';

/** Who the run is, where it stands, and what it produced or why it failed. */
export function RunHeader({ run, now }: { run: RunDetail['run']; now: number }) {
  const open = isOpenRun(run.status);
  const endedAt = run.finishedAt ? new Date(run.finishedAt).getTime() : now;
  return (
    <section className="panel">
      <div className="run-title">
        <StatusBadge status={run.status} testId="run-status" />
        <h1>
          {run.flowName} <span className="muted">v{run.flowVersion}</span>
        </h1>
        <span className={open ? 'live live-on' : 'live'}>
          {open ? 'Live · refreshing every 1 s' : 'Finished · not refreshing'}
        </span>
      </div>
      {run.stuckReason ? (
        <p className="notice notice-bad" data-testid="stuck-reason">
          <strong>Stuck:</strong> {run.stuckReason}
        </p>
      ) : null}
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
      </dl>
      <div className="json-columns">
        <div>
          <h3>Input</h3>
          <JsonBlock value={run.input} />
        </div>
        {run.error !== null ? (
          <div>
            <h3>Error</h3>
            <RecordedError error={run.error} />
          </div>
        ) : null}
        {run.output !== null ? (
          <div>
            <h3>Output</h3>
            <JsonBlock value={run.output} />
          </div>
        ) : null}
      </div>
    </section>
  );
}
