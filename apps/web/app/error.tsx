'use client';

import Link from 'next/link';

/** Last line of defence: a rendering error still leaves the operator a way out. */
export default function ConsoleError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <section className="panel panel-bad" role="alert">
      <h2>This page failed to render</h2>
      <p>
        {error.message || 'Unknown error'}
        {error.digest ? ` (digest ${error.digest})` : ''}
      </p>
      <p className="actions">
        <button type="button" onClick={reset}>
          Try again
        </button>
        <Link href="/runs">← Go to all runs</Link>
      </p>
    </section>
  );
}
