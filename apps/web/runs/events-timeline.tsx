import type { FlowEventRow } from '@/trpc/api-types';
import { formatDuration, formatTimeOfDay } from '@/ui/format-time';
import { JsonInline } from '@/ui/json-block';

/** The run's business history (flow_events), oldest first, with the offset from the first event. */
export function EventsTimeline({ events }: { events: FlowEventRow[] }) {
  if (events.length === 0) return <p className="empty">No events yet.</p>;
  const origin = new Date(events[0]?.at ?? 0).getTime();
  return (
    <ol className="timeline" data-testid="events-timeline">
      {events.map((event) => (
        <li
          key={event.id}
          className={event.type.includes('fail') || event.type.includes('error') ? 'event event-bad' : 'event'}
        >
          <time dateTime={event.at} title={event.at}>
            {formatTimeOfDay(event.at, true)}
          </time>
          <span className="muted offset">+{formatDuration(new Date(event.at).getTime() - origin)}</span>
          <span className="event-type">{event.type}</span>
          {event.sequence !== null ? <span className="muted">step #{event.sequence}</span> : null}
          {event.data !== null && !(typeof event.data === 'object' && Object.keys(event.data).length === 0) ? (
            <JsonInline value={event.data} />
          ) : null}
        </li>
      ))}
    </ol>
  );
}
