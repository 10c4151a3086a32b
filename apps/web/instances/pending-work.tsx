import { Timestamp } from '@/ui/timestamp';
import type { InstanceDetail } from './instance-types';
import { ScrollBox } from '@/ui/scroll-box';

/** The instance's pending timeouts (soonest first): each fires only in the state it expects. */
export function PendingTimeouts({ timeouts, now }: { timeouts: InstanceDetail['timeouts']; now: number }) {
  return (
    <section id="timeouts" data-testid="pending-timeouts">
      <h2>Pending timeouts</h2>
      {timeouts.length === 0 ? (
        <p className="empty">No timeout is pending.</p>
      ) : (
        <ScrollBox label="Pending timeouts">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Timeout</th>
                <th scope="col">Fires if still in</th>
                <th scope="col">Due</th>
                <th scope="col">Attempts</th>
              </tr>
            </thead>
            <tbody>
              {timeouts.map((t) => (
                <tr key={t.id} data-testid="timeout-row">
                  <td>{t.name}</td>
                  <td>{t.expectedState}</td>
                  <td>
                    <Timestamp iso={t.dueAt} now={now} />
                  </td>
                  <td className="num">
                    {t.attempts}
                    {t.lastError ? <span className="text-bad"> {t.lastError}</span> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
    </section>
  );
}
