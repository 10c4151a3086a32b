import type { RunDetail } from '@/trpc/api-types';
import { Timestamp } from '@/ui/timestamp';
import { ScrollBox } from '@/ui/scroll-box';

const secs = (s: number) => (s % 60 === 0 ? `${s / 60} min` : `${s} s`);

/**
 * Seed 000's four "how long before we act" dials, as they apply to this run: its business deadline,
 * the lock TTL, the doctor's repair grace and the reclaim threshold (per step where one overrides
 * the config). Each is independent of the others; the table says which are off.
 */
export function TimingPolicy({ detail, now }: { detail: RunDetail; now: number }) {
  const { run, actions, timing } = detail;
  const stepDeadlines = actions.filter((a) => a.expiresAt !== null);
  const reclaimSteps = actions.filter((a) => a.kind === 'action' && a.reclaimStaleAfterSeconds !== null);
  return (
    <section id="timing" data-testid="timing-policy">
      <h2>Timing policy</h2>
      <ScrollBox label="Timing policy">
        <table className="table">
          <thead>
            <tr>
              <th scope="col">Dial</th>
              <th scope="col">For this run</th>
              <th scope="col">Acts by</th>
            </tr>
          </thead>
          <tbody>
            <tr data-testid="dial-deadline">
              <th scope="row">Business deadline</th>
              <td>
                {run.expiresAt ? (
                  <>
                    run expires <Timestamp iso={run.expiresAt} now={now} />
                  </>
                ) : (
                  <>
                    run: none
                    {run.parentRunId
                      ? ' (a child run takes no default deadline)'
                      : timing.deadlineDefaults.runSeconds
                        ? ` (default ${secs(timing.deadlineDefaults.runSeconds)})`
                        : ''}
                  </>
                )}
                {stepDeadlines.map((a) => (
                  <div key={a.sequence}>
                    step #{a.sequence} {a.name} expires <Timestamp iso={a.expiresAt} now={now} />
                  </div>
                ))}
                {run.runTimeoutAt ? (
                  <div>
                    engine backstop: closed as TimedOut <Timestamp iso={run.runTimeoutAt} now={now} />
                  </div>
                ) : null}
              </td>
              <td>the monitor sweep marks it Expired and plans its rollback</td>
            </tr>
            <tr data-testid="dial-lock">
              <th scope="row">Lock TTL</th>
              <td>
                {timing.lock.enabled
                  ? secs(timing.lock.ttlSeconds)
                  : `off (TTL ${secs(timing.lock.ttlSeconds)} when on)`}
              </td>
              <td>an overlap lock left by a dead worker expires; independent of reclaim</td>
            </tr>
            <tr data-testid="dial-grace">
              <th scope="row">Repair grace</th>
              <td>
                {timing.repairGrace.enabled
                  ? `${secs(timing.repairGrace.graceSeconds)} (doctor on)`
                  : `off: the doctor is not enabled (grace ${secs(timing.repairGrace.graceSeconds)} when on)`}
              </td>
              <td>the doctor re-dispatches a Pending step whose job looks lost</td>
            </tr>
            <tr data-testid="dial-reclaim">
              <th scope="row">Reclaim threshold</th>
              <td>
                {reclaimSteps.length === 0
                  ? timing.reclaim.actions.enabled
                    ? `${secs(timing.reclaim.actions.afterSeconds)} (config)`
                    : 'off: a Running step is never claimed again (a dead worker’s step waits for a person)'
                  : reclaimSteps.map((a) => (
                      <div key={a.sequence}>
                        step #{a.sequence} {a.name}: {secs(a.reclaimStaleAfterSeconds ?? 0)}
                        {a.reclaimStaleAt ? (
                          <>
                            , reclaimable <Timestamp iso={a.reclaimStaleAt} now={now} />
                          </>
                        ) : null}
                      </div>
                    ))}
              </td>
              <td>a stale Running step becomes claimable again (kick, the doctor or a redelivery)</td>
            </tr>
          </tbody>
        </table>
      </ScrollBox>
    </section>
  );
}
