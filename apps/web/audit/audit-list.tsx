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
  auditHref,
  auditInputFor,
  auditSources,
  outcomeTone,
  parseAuditFilter,
  type AuditFilter,
} from './audit-filter';
import { AuditTarget } from './audit-target';

const refreshMs = 5000;

/**
 * The audit trail: every repair command (applied, refused or in conflict) and every sign-in and
 * operator change, newest first in one list: who, what, on what, the outcome and why. Filterable
 * (kept in the URL), paged by the API's cursor, runs and instances linked.
 */
export function AuditList({ filter }: { filter: AuditFilter }) {
  const trpc = useTRPC();
  const [now] = useState(() => Date.now());
  const trail = useInfiniteQuery(
    trpc.audit.page.infiniteQueryOptions(auditInputFor(filter, now), {
      getNextPageParam: (last) => last.nextCursor ?? undefined,
      refetchInterval: refreshMs,
      placeholderData: (previous) => previous,
    }),
  );
  const shown = trail.data?.pages.flatMap((p) => p.items);
  const filtered = auditHref(filter) !== '/audit';
  return (
    <>
      <LivePageHead title="Audit trail" query={trail} refreshMs={refreshMs} what="the audit trail" />
      <JournalFilterForm
        testId="audit-filters"
        hrefFor={(v) => auditHref(parseAuditFilter(v))}
        fields={[
          { name: 'source', label: 'Show', value: filter.source, choices: auditSources },
          { name: 'actor', label: 'Who', value: filter.actor, placeholder: 'operator name', size: 14 },
          { name: 'command', label: 'What', value: filter.command, placeholder: 'run.kick, sign_in…', size: 14 },
          { name: 'target', label: 'Target', value: filter.target, placeholder: 'run or instance id', size: 20 },
          { name: 'outcome', label: 'Outcome', value: filter.outcome, placeholder: 'applied, refused…', size: 12 },
          { name: 'since', label: 'When', value: filter.since, choices: sinceChoices },
        ]}
      />
      {shown && shown.length > 0 ? (
        <div className="table-scroll" role="region" aria-label="Audit trail" tabIndex={0}>
          <table className="table" data-testid="audit-trail">
            <thead>
              <tr>
                <th>At</th>
                <th>Who</th>
                <th>What</th>
                <th>Target</th>
                <th>Outcome</th>
                <th>Why</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((e) => (
                <tr key={e.key} data-testid="audit-entry" data-audit-key={e.key}>
                  <td className="nowrap">
                    <time dateTime={e.at} title={`${e.at} (UTC)`}>
                      {formatDateTime(e.at)}
                    </time>
                  </td>
                  <td>
                    <Link href={auditHref({ ...filter, actor: e.actor })}>{e.actor}</Link>
                    {e.address ? <div className="muted">{e.address}</div> : null}
                  </td>
                  <td>
                    <code>{e.action}</code>
                  </td>
                  <td className="nowrap">
                    <AuditTarget entry={e} />
                  </td>
                  <td>
                    <span className={`badge badge-${outcomeTone(e.outcome)}`}>{e.outcome}</span>
                  </td>
                  <td>
                    {e.reason ?? <span className="muted">—</span>}
                    <details className="audit-details">
                      <summary>Details</summary>
                      {/* Focusable: a long detail scrolls inside its box and must be reachable by keyboard. */}
                      <pre className="json" tabIndex={0}>
                        {JSON.stringify(e.details, null, 2)}
                      </pre>
                    </details>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {shown && shown.length === 0 ? (
        <p className="empty" data-testid="audit-empty">
          {filtered ? (
            <>
              Nothing in the audit trail matches this filter. <Link href="/audit">Show the whole trail</Link>
            </>
          ) : (
            'The audit trail is empty: nobody has signed in or repaired anything yet.'
          )}
        </p>
      ) : null}
      <LoadMore query={trail} shown={shown?.length ?? 0} noun="entries" />
    </>
  );
}
