/** A row's tick box: adds or removes `id` from the selection. */
export function RowSelectBox({
  id,
  label,
  selected,
  onSelect,
  testId,
}: {
  id: string;
  label: string;
  selected: ReadonlySet<string>;
  onSelect: (next: ReadonlySet<string>) => void;
  testId?: string;
}) {
  return (
    <input
      type="checkbox"
      aria-label={label}
      checked={selected.has(id)}
      onChange={(e) => {
        const next = new Set(selected);
        if (e.target.checked) next.add(id);
        else next.delete(id);
        onSelect(next);
      }}
      data-testid={testId}
    />
  );
}

/** The header's tick box: every row shown, or none. */
export function AllSelectBox({
  ids,
  label,
  selected,
  onSelect,
}: {
  ids: string[];
  label: string;
  selected: ReadonlySet<string>;
  onSelect: (next: ReadonlySet<string>) => void;
}) {
  return (
    <input
      type="checkbox"
      aria-label={label}
      checked={ids.length > 0 && ids.every((id) => selected.has(id))}
      onChange={(e) => onSelect(e.target.checked ? new Set(ids) : new Set())}
    />
  );
}
