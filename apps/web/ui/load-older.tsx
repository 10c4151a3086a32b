/**
 * The head of a history held a page at a time (a run's steps, events and compensations, an
 * instance's transitions): how many rows are shown and, while older ones remain, a button that
 * loads the page before the oldest shown (ADR 0035).
 */
export function LoadOlder({
  part,
  noun,
  shown,
  more,
  loading,
  onLoad,
}: {
  part: string;
  noun: string;
  shown: number;
  more: boolean;
  loading: boolean;
  onLoad: () => void;
}) {
  if (shown === 0) return null;
  return (
    <p className="list-more" data-testid={`older-${part}`}>
      {more ? (
        <>
          <span className="muted">
            Showing the newest {shown} {noun}.{' '}
          </span>
          <button type="button" onClick={onLoad} disabled={loading} data-testid={`load-older-${part}`}>
            {loading ? 'Loading…' : `Load older ${noun}`}
          </button>
        </>
      ) : (
        <span className="muted" data-testid={`all-${part}`}>
          All {shown} {noun} shown.
        </span>
      )}
    </p>
  );
}
