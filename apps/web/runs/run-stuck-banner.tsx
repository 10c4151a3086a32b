import { stuckHint } from './stuck-hint';

/**
 * The first thing on a stuck run's page: the engine's reason word for word, what to do about it,
 * and a way to the anomalies that usually explain it.
 */
export function RunStuckBanner({ reason, anomalyCount }: { reason: string; anomalyCount: number }) {
  const { code, hint } = stuckHint(reason);
  return (
    <section className="panel panel-bad stuck-banner" role="alert" data-testid="stuck-banner">
      <h2>Stuck: this run cannot move on its own</h2>
      <p className="stuck-reason mono" data-testid="stuck-reason">
        {reason}
      </p>
      <p data-testid="stuck-hint">
        <strong>What to do:</strong>{' '}
        {hint ?? `This console has no advice for ${code ? `“${code}”` : 'this reason'}; read the reason above.`}
        {anomalyCount > 0 ? (
          <>
            {' '}
            <a href="#anomalies">
              See the {anomalyCount} {anomalyCount === 1 ? 'anomaly' : 'anomalies'} recorded for this run ↓
            </a>
          </>
        ) : null}
      </p>
    </section>
  );
}
