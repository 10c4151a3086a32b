'use client';

import { useState } from 'react';

/** Text longer than this is cut, with a button to show it all and a link to download it. */
const cutAt = 2000;

/** Pretty-printed JSON for inputs, outputs and errors; a large value is cut with "show all" and a download. */
export function JsonBlock({ value, tone, name = 'value' }: { value: unknown; tone?: 'bad'; name?: string }) {
  const [all, setAll] = useState(false);
  const text = JSON.stringify(value, null, 2) ?? 'undefined';
  const long = text.length > cutAt;
  return (
    <div className="json-wrap">
      <pre
        className={tone === 'bad' ? 'json json-bad' : 'json'}
        data-testid="json-block"
        data-cut={long && !all ? 'yes' : 'no'}
      >
        {long && !all ? `${text.slice(0, cutAt)}…` : text}
      </pre>
      {long ? (
        <p className="json-more">
          <button type="button" data-testid="json-show-more" onClick={() => setAll(!all)}>
            {all ? 'Show less' : `Show all (${Math.ceil(text.length / 1024)} KB)`}
          </button>{' '}
          <a href={`data:application/json;charset=utf-8,${encodeURIComponent(text)}`} download={`${name}.json`}>
            Download {name}.json
          </a>
        </p>
      ) : null}
    </div>
  );
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
