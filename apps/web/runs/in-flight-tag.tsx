/**
 * Beside a step still `Running` on a run that has ended (a terminate, the run timeout): its row stays
 * as its worker left it, a late outcome is refused, and whether it took effect is not known (ADR 0091).
 */
export function InFlightTag() {
  return (
    <span
      className="badge badge-bad badge-small"
      data-testid="step-in-flight"
      title="The run ended while a worker held this step: whether it took effect is not known"
    >
      run ended: outcome unknown
    </span>
  );
}

/** Whether `status` is a step a worker held when its run ended at `runEndedAt`. */
export const inFlightAtEnd = (status: string, runEndedAt: string | null): runEndedAt is string =>
  status === 'Running' && runEndedAt !== null;
