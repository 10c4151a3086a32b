'use client';

import { useInfiniteQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import { useTRPC } from '@/trpc/trpc-context';
import { LivePageHead } from '@/ui/live-page-head';
import { formatDateTime } from '@/ui/format-time';
import { JournalFilterForm } from '@/ui/journal-filter-form';
import { LoadMore } from '@/ui/load-more';
import { sinceChoices } from '@/ui/since-choices';
import {
  anomaliesHref,
  anomaliesInputFor,
  anomalyCodes,
  parseAnomaliesFilter,
  runFilterValid,
  type AnomaliesFilter,
} from './anomalies-filter';

const refreshMs = 5000;

/**
 * The anomaly log: the engine's second journal (lost claims, rejected outcomes, engine faults),
 * newest first, filtered by code, run and time, paged by the API's cursor; each entry links to its run.
 */
export function AnomaliesList({ filter }: { filter: AnomaliesFilter }) {
  const trpc = useTRPC();
  // The range ends when the filter was chosen, so paging keeps one window.
  const [now] = useState(() => Date.now());
  const anomalies = useInfiniteQuery(
    trpc.anomalies.page.infiniteQueryOptions(anomaliesInputFor(filter, now), {
      getNextPageParam: (last) => last.nextCursor ?? undefined,
      refetchInterval: refreshMs,
      placeholderData: (previous) => previous,
    }),
  );
  const shown = anomalies.data?.pages.flatMap((p) => p.items);
  const filtered = filter.code !== '' || filter.run !== '' || filter.since !== '';
  return (
    <>
      <LivePageHead title="Anomaly log" query={anomalies} refreshMs={refreshMs} what="the anomaly log" />
      <p className="muted">
        Races and engine faults the engine journaled apart from runs&apos; own events: a lost claim or a rejected
        outcome is the engine keeping a recorded result safe; several of one code in a short time are worth a look.
      </p>
      <JournalFilterForm
        testId="anomaly-filters"
        hrefFor={(v) => anomaliesHref(parseAnomaliesFilter(v))}
        fields={[
          {
            name: 'code',
            label: 'Code',
            value: filter.code,
            choices: [{ value: '', label: 'Any code' }, ...anomalyCodes.map((c) => ({ value: c, label: c }))],
          },
          { name: 'run', label: 'Run id', value: filter.run, placeholder: 'any run', maxLength: 100, size: 20 },
          { name: 'since', label: 'When', value: filter.since, choices: sinceChoices },
        ]}
      />
      {!runFilterValid(filter.run) ? (
        <p className="notice notice-bad" role="alert">
          &ldquo;{filter.run}&rdquo; is not a run id (a UUID); showing anomalies of every run.
        </p>
      ) : null}
      {shown && shown.length > 0 ? (
        <div className="table-scroll" role="region" aria-label="Anomalies" tabIndex={0}>
          <table className="table" data-testid="anomaly-log">
            <thead>
              <tr>
                <th>At</th>
                <th>Code</th>
                <th>Run</th>
                <th>Step</th>
                <th>Message</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((a) => (
                <tr key={a.id} data-testid="anomaly-entry" data-anomaly-id={a.id}>
                  <td className="nowrap">
                    <time dateTime={a.at} title={`${a.at} (UTC)`}>
                      {formatDateTime(a.at)}
                    </time>
                  </td>
                  <td>
                    <Link className="code-badge" href={anomaliesHref({ ...filter, code: a.code })}>
                      {a.code}
                    </Link>
                  </td>
                  <td className="nowrap">
                    {a.runId ? (
                      <Link className="mono" href={`/runs/${a.runId}`}>
                        {a.runId.slice(0, 8)}
                      </Link>
                    ) : instanceOf(a.details) ? (
                      <Link className="mono" href={`/instances/${instanceOf(a.details)}`} title="The process instance">
                        instance {instanceOf(a.details)?.slice(0, 8)}
                      </Link>
                    ) : (
                      <span className="muted">—</span>
                    )}
                  </td>
                  <td className="nowrap">
                    {a.sequence !== null && a.runId ? (
                      <Link
                        href={`/runs/${a.runId}#steps`}
                        title="Open the run at its steps table, which lists this step"
                      >
                        #{a.sequence} {a.name ? <span className="mono">{a.name}</span> : null}
                      </Link>
                    ) : a.name ? (
                      <span className="mono">{a.name}</span>
                    ) : (
                      <span className="muted">—</span>
                    )}
                  </td>
                  <td>{a.message}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {shown && shown.length === 0 ? (
        <p className="empty" data-testid="anomalies-empty">
          {filtered ? (
            <>
              No anomaly matches this filter. <Link href="/anomalies">Show every anomaly</Link>
            </>
          ) : (
            'No anomaly journaled: the engine has lost no claim and rejected no outcome.'
          )}
        </p>
      ) : null}
      <LoadMore query={anomalies} shown={shown?.length ?? 0} noun="anomalies" />
    </>
  );
}

/** The process instance an anomaly names (process_timeout_failing, ADR 0127; process_delivery_held_up, ADR 0132), if any. */
function instanceOf(details: unknown): string | null {
  if (typeof details !== 'object' || details === null) return null;
  const id = (details as { instanceId?: unknown }).instanceId;
  return typeof id === 'string' && /^[0-9a-f-]{36}$/i.test(id) ? id : null;
}
