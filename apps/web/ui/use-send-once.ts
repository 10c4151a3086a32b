import { useRef } from 'react';

/**
 * Guards a form's send so a double click, or a second Enter before the first submit re-rendered the
 * form, sends one request: `start()` is true once until `done()` (call it when the answer came back,
 * whatever it was, so the operator can try again after an error).
 */
export function useSendOnce(): { start: () => boolean; done: () => void } {
  const sending = useRef(false);
  return {
    start: () => {
      if (sending.current) return false;
      sending.current = true;
      return true;
    },
    done: () => {
      sending.current = false;
    },
  };
}
