/** Pretty-printed JSON for inputs, outputs and errors. */
export function JsonBlock({ value, tone }: { value: unknown; tone?: 'bad' }) {
  return <pre className={tone === 'bad' ? 'json json-bad' : 'json'}>{JSON.stringify(value, null, 2)}</pre>;
}

/** One line of JSON, cut to `max` characters, full text in the tooltip. */
export function JsonInline({ value, max = 120 }: { value: unknown; max?: number }) {
  const text = JSON.stringify(value);
  const shown = text.length > max ? `${text.slice(0, max - 1)}…` : text;
  return (
    <code className="json-inline" title={text.length > max ? text : undefined}>
      {shown}
    </code>
  );
}
