'use client';

import { useId } from 'react';

/** Parses editor text as JSON: the value, or the parser's complaint. Empty text is `undefined`. */
export function parseJsonText(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  if (text.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

/** A JSON text area that says, as it is typed, whether the text parses. */
export function JsonEditor({
  label,
  value,
  onChange,
  testId,
  rows = 6,
}: {
  label: string;
  value: string;
  onChange: (text: string) => void;
  testId: string;
  rows?: number;
}) {
  const id = useId();
  const parsed = parseJsonText(value);
  return (
    <div className="json-editor">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        data-testid={testId}
        className="mono"
        rows={rows}
        spellCheck={false}
        value={value}
        aria-invalid={!parsed.ok}
        aria-describedby={`${id}-state`}
        onChange={(e) => onChange(e.target.value)}
      />
      <span id={`${id}-state`} className={parsed.ok ? 'muted' : 'text-bad'} data-testid={`${testId}-state`}>
        {parsed.ok ? (value.trim() === '' ? 'empty' : 'valid JSON') : `not JSON: ${parsed.error}`}
      </span>
    </div>
  );
}
