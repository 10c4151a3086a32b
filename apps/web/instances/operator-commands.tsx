import type { InstanceOperatorCommand } from './instance-types';

/**
 * The repairs the process defines, and which the instance accepts in its current state (operators run
 * them from the Repairs section's forms).
 */
export function OperatorCommands({
  commands,
  currentState,
  status,
}: {
  commands: InstanceOperatorCommand[];
  currentState: string;
  status: string;
}) {
  if (commands.length === 0) return <p className="empty">This process defines no operator commands.</p>;
  const accepted = commands.filter((c) => c.acceptedNow);
  return (
    <>
      <p className="muted" data-testid="commands-summary">
        {accepted.length > 0
          ? `${accepted.length} of ${commands.length} accepted in ${currentState} now.`
          : status === 'ACTIVE'
            ? `None is accepted in ${currentState}.`
            : `None applies: the instance is ${status}.`}{' '}
        Operators run them under Repairs.
      </p>
      <ul className="command-list" data-testid="operator-commands">
        {commands.map((c) => (
          <li key={c.name} data-testid="operator-command" data-accepted={c.acceptedNow ? 'yes' : 'no'}>
            <strong className={c.acceptedNow ? undefined : 'muted'}>{c.name}</strong>{' '}
            {c.acceptedNow ? (
              <span className="badge badge-ok badge-small">accepted now</span>
            ) : (
              <span className="muted">(from {c.from.join(' or ')})</span>
            )}{' '}
            <span className="muted">→ {c.to}</span>
            {c.description ? <div>{c.description}</div> : null}
          </li>
        ))}
      </ul>
    </>
  );
}
