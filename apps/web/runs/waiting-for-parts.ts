/** A piece of a `waitingFor` text: plain words, an instant to show in local time, or a run to link. */
export type WaitingForPart =
  { kind: 'text'; text: string } | { kind: 'time'; iso: string } | { kind: 'run'; id: string };

// The engine writes instants with toISOString() and names runs by UUID ("child run 6f1c… (demo.x)").
const tokens =
  /(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z)|(?<=\brun )([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/gi;

/** What a waiting run reads as after "Waiting": " for …" for the kinds the engine writes, ": …" otherwise. */
export function waitingForLead(text: string): string {
  return /^(signal|timer|retry|child run)\b/.test(text) ? 'Waiting for' : 'Waiting:';
}

/**
 * Splits the engine's `waitingFor` text (`signal "confirm" until 2026-01-02T10:42:13.000Z`) so the
 * console can show instants in local time with a countdown and turn run ids into links. A signal
 * without a timeout is recorded as "until ever", which reads better as "(no timeout)".
 */
export function waitingForParts(text: string): WaitingForPart[] {
  const source = text.replace(/ until ever$/, ' (no timeout)');
  const parts: WaitingForPart[] = [];
  let at = 0;
  for (const match of source.matchAll(tokens)) {
    if (match.index > at) parts.push({ kind: 'text', text: source.slice(at, match.index) });
    parts.push(match[1] ? { kind: 'time', iso: match[1] } : { kind: 'run', id: match[0] });
    at = match.index + match[0].length;
  }
  if (at < source.length) parts.push({ kind: 'text', text: source.slice(at) });
  return parts;
}
