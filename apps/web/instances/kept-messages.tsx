import { ClockTime } from '@/ui/clock-time';
import { JsonBlock } from '@/ui/json-block';
import type { InstanceTransition } from './instance-types';

interface Kept {
  id: string;
  at: string;
  label: string;
  messageId: string;
  messageType: string;
  payload: unknown;
}

/**
 * The messages the instance kept rather than applied: those it skipped while quarantined (their
 * payload is in the history row) and the one a skip release stepped over (kept whole in the
 * release's row). Nothing is deleted, so an operator can still read what was skipped.
 */
export function keptMessages(history: InstanceTransition[]): Kept[] {
  const out: Kept[] = [];
  for (const t of history) {
    const d = t.detail as Record<string, unknown> | null;
    if (t.outcome === 'skipped_quarantined' && d && 'payload' in d)
      out.push({
        id: t.id,
        at: t.at,
        label: 'skipped while quarantined',
        messageId: t.messageId,
        messageType: t.messageType,
        payload: d.payload,
      });
    const skipped = d?.skippedMessage as { id?: unknown; type?: unknown; payload?: unknown } | undefined;
    if (t.outcome === 'repair' && skipped && typeof skipped === 'object')
      out.push({
        id: `${t.id}-skipped`,
        at: t.at,
        label: 'skipped by a release',
        messageId: typeof skipped.id === 'string' ? skipped.id : '',
        messageType: typeof skipped.type === 'string' ? skipped.type : '',
        payload: skipped.payload,
      });
  }
  return out;
}

export function KeptMessages({ history }: { history: InstanceTransition[] }) {
  const kept = keptMessages(history);
  if (kept.length === 0) return null;
  return (
    <section id="kept-messages" data-testid="kept-messages">
      <h2>Kept messages</h2>
      <ul className="kept-list">
        {kept.map((k) => (
          <li key={k.id} data-testid="kept-message" data-message-id={k.messageId}>
            <p>
              <strong>{k.messageType}</strong> <code>{k.messageId}</code> <span className="muted">{k.label}</span>{' '}
              <ClockTime iso={k.at} />
            </p>
            <JsonBlock value={k.payload} />
          </li>
        ))}
      </ul>
    </section>
  );
}
