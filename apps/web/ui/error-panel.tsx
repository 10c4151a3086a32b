import Link from 'next/link';
import type { ReactNode } from 'react';

/** A failure the operator must see, with a way forward (retry, or back to a known page). */
export function ErrorPanel({
  title,
  children,
  onRetry,
  backHref,
  backLabel = 'Back to all runs',
  testId,
}: {
  title: string;
  children?: ReactNode;
  onRetry?: () => void;
  backHref?: string;
  backLabel?: string;
  testId?: string;
}) {
  return (
    <section className="panel panel-bad" role="alert" data-testid={testId}>
      <h2>{title}</h2>
      {children}
      <p className="actions">
        {onRetry ? (
          <button type="button" onClick={onRetry}>
            Try again
          </button>
        ) : null}
        {backHref ? <Link href={backHref}>← {backLabel}</Link> : null}
      </p>
    </section>
  );
}
