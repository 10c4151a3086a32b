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

/** The outbox rows the instance emitted, newest first: what, where, and whether it was published. */
export function InstanceOutbox({ outbox, now }: { outbox: InstanceDetail['outbox']; now: number }) {
  return (
    <section id="outbox" data-testid="instance-outbox">
      <h2>Outbox</h2>
      {outbox.length === 0 ? (
        <p className="empty">It has emitted no outbox message.</p>
      ) : (
        <ScrollBox label="Outbox rows">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Message</th>
                <th scope="col">To</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {outbox.map((o) => (
                <tr key={o.messageId} data-testid="outbox-row" data-status={o.status}>
                  <td>
                    {o.type} <code className="muted">{o.messageId}</code>
                  </td>
                  <td>{o.destination}</td>
                  <td>
                    {o.status}
                    {o.attempts > 1 ? ` after ${o.attempts} attempts` : ''}
                    {o.lastError ? <span className="text-bad"> {o.lastError}</span> : null}
                  </td>
                  <td>
                    <Timestamp iso={o.createdAt} now={now} />
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
