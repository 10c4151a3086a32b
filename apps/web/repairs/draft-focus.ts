'use client';

import { useRef, type RefObject } from 'react';

/**
 * Where keyboard focus goes back to when a repair draft closes (review 42): the control that opened it
 * (a repair button, a form's Preview), remembered as the draft opens; if that control is gone or
 * disabled by then, `fallback` (the section's heading). Without it focus falls to the page's body and
 * the next Tab starts again at the top bar.
 */
export function useDraftOpener(fallback?: RefObject<HTMLElement | null>) {
  const opener = useRef<HTMLElement | null>(null);
  return {
    /** Call as the draft opens (not on a redraft: its button is inside the draft). */
    remember() {
      const el = document.activeElement;
      opener.current = el instanceof HTMLElement && el !== document.body ? el : null;
    },
    /** Call as the draft closes. */
    returnFocus() {
      const el = opener.current;
      opener.current = null;
      const target = el && el.isConnected && !el.matches(':disabled') ? el : fallback?.current;
      target?.focus();
    },
  };
}
