import Link from 'next/link';
import type { RunDetail } from '@/trpc/api-types';
import { JsonBlock } from '@/ui/json-block';
import { StatusBadge } from '@/ui/status-badge';
import { RecordedError } from './recorded-error';
import { RunCancelNotice } from './run-cancel-notice';
import { RunFacts } from './run-facts';
import { isOpenRun } from './run-statuses';
import { StuckTag } from './stuck-tag';
import { WaitingForText } from './waiting-for-text';

/** Who the run is, where it stands (and what it waits for), and what it produced or why it failed. */
export function RunHeader({ run, now }: { run: RunDetail['run']; now: number }) {
  const open = isOpenRun(run.status);
  return (
    <section className="panel">
      <div className="run-title">
        <StatusBadge status={run.status} testId="run-status" />
        {run.stuckReason ? <StuckTag /> : null}
        <h1>
          {run.flowName} <span className="muted">v{run.flowVersion}</span>
        </h1>
        <span className={open ? 'live live-on' : 'live'}>
          {open ? 'Live · refreshing every 1 s' : 'Finished · not refreshing'}
        </span>
      </div>
      {run.parentRunId ? (
        <p className="lineage muted">
          Child run of{' '}
          <Link href={`/runs/${run.parentRunId}`} className="mono" data-testid="parent-run-link">
            {run.parentRunId}
          </Link>
        </p>
      ) : null}
      {run.waitingFor ? (
        <p className="waiting-line" data-testid="waiting-for">
          <WaitingForText text={run.waitingFor} now={now} />
        </p>
      ) : null}
      <RunCancelNotice run={run} open={open} now={now} />
      <RunFacts run={run} open={open} now={now} />
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
