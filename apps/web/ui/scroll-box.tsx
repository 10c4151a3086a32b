import type { ReactNode } from 'react';

/**
 * A table's own horizontal scroll box: at 390 px the table scrolls inside it, never the page. It
 * is a named, focusable region so a keyboard can scroll it (axe: scrollable-region-focusable).
 */
export function ScrollBox({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="table-scroll" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
