import { ClockTime } from '@/ui/clock-time';
import { formatDateTime } from '@/ui/format-time';
import { JsonInline } from '@/ui/json-block';
import type { InstanceTransition } from './instance-types';
import { LoadOlder } from '@/ui/load-older';
import { ScrollBox } from '@/ui/scroll-box';

/** How each outcome the engine records reads, and how its row looks: only applied and repair moved it. */
const outcomes: Record<string, { label: string; tone: string; row: string | undefined }> = {
  applied: { label: 'Applied', tone: 'ok', row: undefined },
  ignored: { label: 'Ignored', tone: 'muted', row: 'outcome-skip' },
  skipped_quarantined: { label: 'Skipped (quarantined)', tone: 'muted', row: 'outcome-skip' },
  quarantined: { label: 'Quarantined', tone: 'bad', row: 'outcome-bad' },
  repair: { label: 'Repair', tone: 'warn', row: 'outcome-repair' },
};

const reasonText: Record<string, string> = {
  not_accepted_in_state: 'not accepted in this state',
  guard_rejected: 'guard rejected it',
  stale_timeout: 'stale timeout',
};

/**
 * The instance's transitions held so far, oldest first: which message moved it where, and what came
 * of it; while older ones remain, a button loads the page before the oldest shown.
 */
export function TransitionHistoryTable({
  history,
  older,
}: {
  history: InstanceTransition[];
  older: { more: boolean; loading: boolean; error: string | null; load: () => void };
}) {
  if (history.length === 0) return <p className="empty">No transitions recorded yet.</p>;
  return (
    <>
      <LoadOlder
        part="transitions"
        noun="transitions"
        shown={history.length}
        more={older.more}
        loading={older.loading}
        onLoad={older.load}
      />
      {older.error ? (
        <p className="notice notice-bad" role="alert">
          Loading older transitions failed: {older.error}
        </p>
      ) : null}
      <ScrollBox label="Transition history">
        <table className="table" data-testid="history-table">
          <thead>
            <tr>
              <th>At</th>
              <th>Message</th>
              <th>From → to</th>
              <th>Outcome</th>
              <th>Detail</th>
            </tr>
          </thead>
          <tbody>
            {history.map((t) => {
              const o = outcomes[t.outcome] ?? { label: t.outcome, tone: 'muted', row: undefined };
              const detail = t.detail as Record<string, unknown> | null;
              const reason = t.outcome === 'ignored' && typeof detail?.reason === 'string' ? detail.reason : null;
              return (
                <tr key={t.id} data-testid="history-row" data-outcome={t.outcome} className={o.row}>
                  <td className="nowrap" title={formatDateTime(t.at)}>
                    <ClockTime iso={t.at} />
                  </td>
                  <td>
                    {t.messageType} <code className="muted">{t.messageId}</code>
                  </td>
                  <td className="nowrap">
                    {t.from === t.to ? (
                      <>
                        {t.from} <span className="muted">(stayed)</span>
                      </>
                    ) : (
                      `${t.from} → ${t.to}`
                    )}
                  </td>
                  <td className="nowrap">
                    <span className={`badge badge-${o.tone}`} data-testid="history-outcome">
                      {o.label}
                    </span>
                    {reason ? <span className="muted"> {reasonText[reason] ?? reason}</span> : null}
                  </td>
                  <td>{detail !== null && Object.keys(detail).length > 0 ? <JsonInline value={detail} /> : null}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </ScrollBox>
      <p className="muted">
        Exact redeliveries of a message already handled are dropped by the inbox and leave no row here.
      </p>
    </>
  );
}
