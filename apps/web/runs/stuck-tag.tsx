/** Beside a status badge: the run's status alone ("Waiting") hides that it cannot move. */
export function StuckTag() {
  return (
    <span className="badge badge-bad badge-small" data-testid="stuck-tag">
      Stuck
    </span>
  );
}
