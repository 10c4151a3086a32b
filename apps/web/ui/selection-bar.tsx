/**
 * How many rows are ticked, and where bulk actions will be (ADR 0018): the button stays disabled
 * until the repairs API exists, so the selection is there to learn, not to act on yet.
 */
export function SelectionBar({ count, onClear, noun }: { count: number; onClear: () => void; noun: string }) {
  if (count === 0) return null;
  return (
    <div className="selection-bar" data-testid="selection-bar">
      <span>
        {count} {noun}
        {count === 1 ? '' : 's'} selected
      </span>
      <button type="button" disabled title="Bulk repairs arrive with the repairs API">
        Bulk actions (coming with repairs)
      </button>
      <button type="button" onClick={onClear}>
        Clear selection
      </button>
    </div>
  );
}
