import type { RunDetail } from '@/trpc/api-types';

type LeftUndone = NonNullable<RunDetail['run']['leftUndone']>;

/**
 * A run closed without compensation (the engine's run timeout, an operator's terminate) names what
 * it left undone: the completed steps whose compensation never ran, and the steps a worker held when
 * it closed, whose effect is not known (ADR 0091), so on-call knows what to check and undo by hand.
 */
export function RunLeftUndone({ leftUndone }: { leftUndone: LeftUndone }) {
  const inFlight = leftUndone.in_flight ?? [];
  if (leftUndone.steps.length === 0 && inFlight.length === 0) return null;
  return (
    <section className="panel panel-bad" data-testid="left-undone">
      <h2>Left undone: closed without compensation</h2>
      {inFlight.length > 0 ? (
        <>
          <p>In flight when the run closed; whether each took effect is not known, so check it:</p>
          <ul>
            {inFlight.map((f) => (
              <li key={`${f.kind}-${f.sequence}-${f.name}`} data-testid="left-undone-in-flight">
                {f.kind === 'action' ? (
                  <>
                    Step {f.sequence} <span className="mono">{f.name}</span> was running on a worker.
                  </>
                ) : (
                  <>
                    Compensation <span className="mono">{f.name}</span> of step {f.sequence} was running on a worker.
                  </>
                )}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {leftUndone.steps.length > 0 && inFlight.length > 0 ? <p>Completed and not compensated:</p> : null}
      {leftUndone.steps.length > 0 ? (
        <ul>
          {leftUndone.steps.map((s) => (
            <li key={s.sequence} data-testid="left-undone-step">
              Step {s.sequence} <span className="mono">{s.name}</span> completed;{' '}
              {s.compensation ? (
                <>
                  its compensation <span className="mono">{s.compensation}</span> never ran.
                </>
              ) : (
                <>its compensation, if it has one, never ran.</>
              )}
            </li>
          ))}
        </ul>
      ) : null}
      {leftUndone.plan_error ? (
        <p className="muted">
          The flow&apos;s code could not be replayed to name the compensations: {leftUndone.plan_error}
        </p>
      ) : null}
    </section>
  );
}
