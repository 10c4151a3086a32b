import type { RunDetail } from '@/trpc/api-types';

type LeftUndone = NonNullable<RunDetail['run']['leftUndone']>;

/**
 * A run closed without compensation (the engine's run timeout) names what it left undone: the
 * completed steps whose compensation never ran, so on-call knows what to undo by hand.
 */
export function RunLeftUndone({ leftUndone }: { leftUndone: LeftUndone }) {
  if (leftUndone.steps.length === 0) return null;
  return (
    <section className="panel panel-bad" data-testid="left-undone">
      <h2>Left undone: closed without compensation</h2>
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
      {leftUndone.source === 'record' ? (
        <p className="muted">
          The flow&apos;s code could not be replayed to name the compensations
          {leftUndone.plan_error ? `: ${leftUndone.plan_error}` : '.'}
        </p>
      ) : null}
    </section>
  );
}
