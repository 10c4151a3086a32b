'use client';

import type { FormEvent } from 'react';
import { formText } from './form-text';

export interface SearchField {
  /** The form field's name and the filter key it sets. */
  name: string;
  label: string;
  value: string;
  placeholder: string;
  maxLength: number;
  testId: string;
  type?: 'search' | 'text';
  size?: number;
}

/**
 * A list's text filters (search, flow, state) in one form: Enter or Apply sends them all, and the
 * caller writes them into the URL. Re-keyed by the values, so a URL change resets what is typed.
 */
export function ListSearchForm({
  fields,
  onApply,
}: {
  fields: SearchField[];
  onApply: (values: Record<string, string>) => void;
}) {
  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    onApply(Object.fromEntries(fields.map((f) => [f.name, formText(form, f.name)])));
  };
  return (
    <form className="search-form" role="search" onSubmit={onSubmit} key={fields.map((f) => f.value).join('|')}>
      {fields.map((f) => (
        <label key={f.name}>
          {f.label}{' '}
          <input
            type={f.type ?? 'text'}
            name={f.name}
            defaultValue={f.value}
            placeholder={f.placeholder}
            maxLength={f.maxLength}
            size={f.size}
            data-testid={f.testId}
          />
        </label>
      ))}
      <button type="submit">Apply</button>
    </form>
  );
}
