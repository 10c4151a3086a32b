/** What a repair does or would do (the engine's RepairEffects; the same shape for preview and result). */
export interface Effects {
  transitions: { subject: string; from: string; to: string }[];
  compensations: { actionSequence: number; name: string }[];
  jobs: { kind: string; runId: string; availableAt: string }[];
  signals: { runId: string; name: string; payload: unknown }[];
  outboxMessages: { type: string; destination: string }[];
  history: string[];
  notes: string[];
}

/** The effects as a list an operator reads before confirming: transitions, compensations, jobs, messages. */
export function RepairEffectsList({ effects, testId }: { effects: Effects; testId: string }) {
  const empty =
    effects.transitions.length +
      effects.compensations.length +
      effects.jobs.length +
      effects.signals.length +
      effects.outboxMessages.length +
      effects.notes.length ===
    0;
  return (
    <ul className="effects" data-testid={testId}>
      {effects.transitions.map((t) => (
        <li key={`t-${t.subject}-${t.to}`} data-effect="transition">
          {t.subject}: <code>{t.from}</code> → <code>{t.to}</code>
        </li>
      ))}
      {effects.compensations.map((c) => (
        <li key={`c-${c.actionSequence}`} data-effect="compensation">
          compensates step {c.actionSequence} ({c.name})
        </li>
      ))}
      {effects.jobs.map((j) => (
        <li key={`j-${j.runId}-${j.availableAt}`} data-effect="job">
          sends a fresh job for the run
        </li>
      ))}
      {effects.signals.map((s) => (
        <li key={`s-${s.name}`} data-effect="signal">
          sends signal <code>{s.name}</code>
        </li>
      ))}
      {effects.outboxMessages.map((m, i) => (
        <li key={`o-${i}-${m.type}`} data-effect="outbox">
          queues outbox message <code>{m.type}</code> to <code>{m.destination}</code>
        </li>
      ))}
      {effects.notes.map((n) => (
        <li key={`n-${n}`} data-effect="note">
          {n}
        </li>
      ))}
      {empty ? <li className="muted">nothing would change</li> : null}
    </ul>
  );
}
