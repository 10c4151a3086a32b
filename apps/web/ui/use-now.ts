'use client';

import { useEffect, useState } from 'react';

/** The current time, re-rendering every `intervalMs` so ages ("12 s ago") keep moving. */
export function useNow(intervalMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return now;
}
