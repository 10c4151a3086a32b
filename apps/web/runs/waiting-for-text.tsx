import Link from 'next/link';
import { formatDateTime, formatNear, formatRelative } from '@/ui/format-time';
import { waitingForLead, waitingForParts } from './waiting-for-parts';

/**
 * "Waiting for signal "confirm" until 10:42:13 (in 23 s)": the engine's text with its instants in
 * local time (with the zone) and a countdown, and run ids as links. An instant already past is marked overdue,
 * since a healthy run would have moved on by then.
 */
export function WaitingForText({ text, now }: { text: string; now: number }) {
  return (
    <>
      {waitingForLead(text)}{' '}
      {waitingForParts(text).map((part, i) => {
        if (part.kind === 'text') return <span key={i}>{part.text}</span>;
        if (part.kind === 'run')
          return (
            <Link key={i} href={`/runs/${part.id}`} className="mono" title={part.id}>
              {part.id.slice(0, 8)}
            </Link>
          );
        const overdue = new Date(part.iso).getTime() < now - 1000;
        return (
          <time key={i} dateTime={part.iso} title={`${formatDateTime(part.iso)} · ${part.iso}`}>
            {formatNear(part.iso, now)}{' '}
            <span className={overdue ? 'overdue' : 'muted'}>
              ({overdue ? `overdue, due ${formatRelative(part.iso, now)}` : formatRelative(part.iso, now)})
            </span>
          </time>
        );
      })}
    </>
  );
}
