import Link from 'next/link';
import { AllSelectBox, RowSelectBox } from '@/ui/select-box';
import type { RunSummary } from '@/trpc/api-types';
import { formatAge } from '@/ui/format-time';
import { StatusBadge } from '@/ui/status-badge';
import { RunReason } from './run-reason';
import { StuckTag } from './stuck-tag';

/**
 * One row per run, with a tick box to select it; the run cell links to the run. The table scrolls
 * inside its own box, so a narrow screen never scrolls the page sideways.
 */
export function RunsTable({
  runs,
  now,
  selected,
  onSelect,
}: {
  runs: RunSummary[];
  now: number;
  selected: ReadonlySet<string>;
  onSelect: (next: ReadonlySet<string>) => void;
}) {
  return (
    <div className="table-scroll" role="region" aria-label="Runs" tabIndex={0}>
      <table className="table" data-testid="runs-table">
        <thead>
          <tr>
            <th>
              <AllSelectBox
                ids={runs.map((r) => r.id)}
                label="Select every run shown"
                selected={selected}
                onSelect={onSelect}
              />
            </th>
            <th>Status</th>
            <th>Run</th>
            <th>Flow</th>
            <th>Business key</th>
            <th>Created</th>
            <th>Last update</th>
            <th>Reason</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => (
            <tr
              key={run.id}
              data-testid="run-row"
              data-run-id={run.id}
              className={run.stuckReason ? 'row-stuck' : undefined}
            >
              <td>
                <RowSelectBox
                  id={run.id}
                  label={`Select run ${run.id.slice(0, 8)}`}
                  selected={selected}
                  onSelect={onSelect}
                  testId="run-select"
                />
              </td>
              <td className="nowrap">
                <StatusBadge status={run.status} /> {run.stuckReason ? <StuckTag /> : null}
              </td>
              <td>
                <Link href={`/runs/${run.id}`} className="mono" title={run.id}>
                  {run.id.slice(0, 8)}
                </Link>
              </td>
              <td>
                {run.flowName} <span className="muted">v{run.flowVersion}</span>
              </td>
              <td className="mono">{run.businessKey ?? <span className="muted">—</span>}</td>
              <td className="nowrap" title={run.createdAt}>
                {formatAge(run.createdAt, now)}
              </td>
              <td className="nowrap" title={run.updatedAt}>
                {formatAge(run.updatedAt, now)}
              </td>
              <td>
                <RunReason run={run} now={now} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
