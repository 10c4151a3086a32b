'use client';

import type { FormEvent } from 'react';
import { formText } from './form-text';
import { useFilterNavigation } from './use-filter-navigation';

export interface JournalField {
  name: string;
  label: string;
  value: string;
  /** A text box, or a select with these choices (value, label). */
  choices?: readonly { value: string; label: string }[];
  placeholder?: string;
  maxLength?: number;
  size?: number;
}

/**
 * A journal page's filters (anomaly log, audit trail) as one form: Apply (or Enter) writes them
 * into the URL as a history entry (Back undoes it), which re-renders the list; Clear goes back to everything. Re-keyed by the values,
 * so a URL change resets what is typed.
 */
export function JournalFilterForm({
  fields,
  hrefFor,
  testId,
}: {
  fields: JournalField[];
  hrefFor: (values: Record<string, string>) => string;
  testId: string;
}) {
  const navigate = useFilterNavigation();
  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    navigate(hrefFor(Object.fromEntries(fields.map((f) => [f.name, formText(form, f.name)]))));
  };
  const empty = Object.fromEntries(fields.map((f) => [f.name, '']));
  return (
    <form
      className="search-form journal-filters"
      role="search"
      onSubmit={onSubmit}
      key={fields.map((f) => f.value).join('|')}
      data-testid={testId}
    >
      {fields.map((f) => (
        <label key={f.name}>
          {f.label}{' '}
          {f.choices ? (
            <select name={f.name} defaultValue={f.value} data-testid={`filter-${f.name}`}>
              {f.choices.map((c) => (
                <option key={c.value} value={c.value}>
                  {c.label}
                </option>
              ))}
            </select>
          ) : (
            <input
              type="text"
              name={f.name}
              defaultValue={f.value}
              placeholder={f.placeholder}
              maxLength={f.maxLength ?? 200}
              size={f.size}
              data-testid={`filter-${f.name}`}
            />
          )}
        </label>
      ))}
      <button type="submit">Apply</button>
      <button type="button" onClick={() => navigate(hrefFor(empty))}>
        Clear
      </button>
    </form>
  );
}
