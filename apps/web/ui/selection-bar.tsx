import type { ReactNode } from 'react';

/** How many rows are ticked, what can be done with them (`children`: the bulk actions), and a way to clear it. */
export function SelectionBar({
  count,
  onClear,
  noun,
  children,
}: {
  count: number;
  onClear: () => void;
  noun: string;
  children?: ReactNode;
}) {
  if (count === 0) return null;
  return (
    <div className="selection-bar" data-testid="selection-bar">
      <span>
        {count} {noun}
        {count === 1 ? '' : 's'} selected
      </span>
      {children}
      <button type="button" onClick={onClear}>
        Clear selection
      </button>
    </div>
  );
}
