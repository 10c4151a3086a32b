import type { AnomalyRow } from '@/trpc/api-types';
import { formatDateTime } from '@/ui/format-time';
import { ScrollBox } from '@/ui/scroll-box';

/** What the engine noticed going wrong around this run (lost claims, failed listeners…), oldest first. */
export function AnomaliesTable({ anomalies }: { anomalies: AnomalyRow[] }) {
  return (
    <ScrollBox label="Anomalies">
      <table className="table" data-testid="anomalies-table">
        <thead>
          <tr>
            <th>At</th>
            <th>Code</th>
            <th>Step</th>
            <th>Message</th>
          </tr>
        </thead>
        <tbody>
          {anomalies.map((a) => (
            <tr key={a.id} data-testid="anomaly-row">
              <td className="nowrap">
                <time dateTime={a.at} title={a.at}>
                  {formatDateTime(a.at)}
                </time>
              </td>
              <td>
                <span className="code-badge">{a.code}</span>
              </td>
              <td className="nowrap">
                {a.sequence !== null ? <span className="muted">#{a.sequence} </span> : null}
                {a.name ? <span className="mono">{a.name}</span> : a.sequence === null ? '—' : null}
              </td>
              <td>{a.message}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  );
}
