'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import type { Definitions } from '@/trpc/api-types';
import { useTRPC } from '@/trpc/trpc-context';
import { LivePageHead } from '@/ui/live-page-head';

const refreshMs = 5000;
const runsOf = (flow: string) => `/runs?status=open&flow=${encodeURIComponent(flow)}`;
const instancesIn = (state: string, quarantined = false) =>
  `/instances?${quarantined ? 'status=QUARANTINED&' : ''}state=${encodeURIComponent(state)}`;

function FlowsTable({ flows }: { flows: Definitions['flows'] }) {
  return (
    <div className="table-scroll" role="region" aria-label="Flows" tabIndex={0}>
      <table className="table" data-testid="flows-table">
        <thead>
          <tr>
            <th>Flow</th>
            <th>Version</th>
            <th>Open runs by status</th>
            <th className="num">Stuck</th>
          </tr>
        </thead>
        <tbody>
          {flows.flatMap((f) =>
            f.versions.map((v, i) => (
              <tr key={`${f.name}@${v.version}`} data-testid="flow-row" data-flow={f.name} data-version={v.version}>
                <td>{i === 0 ? <span className="mono">{f.name}</span> : null}</td>
                <td className="nowrap">
                  v{v.version}{' '}
                  {v.version === f.registeredVersion ? (
                    <span className="badge badge-ok">running here</span>
                  ) : (
                    <span className="badge badge-warn" title="No code of this version is registered here">
                      {f.registeredVersion === null ? 'not registered' : 'old version'}
                    </span>
                  )}
                </td>
                <td>
                  {Object.keys(v.open).length === 0 ? (
                    <span className="muted">none open</span>
                  ) : (
                    Object.entries(v.open).map(([status, n]) => (
                      <span key={status} className="count-pill" data-testid="flow-open-count">
                        {status} <strong>{n}</strong>
                      </span>
                    ))
                  )}{' '}
                  {i === 0 && f.openTotal > 0 ? <Link href={runsOf(f.name)}>open runs →</Link> : null}
                </td>
                <td className="num">
                  {v.stuck > 0 ? (
                    <Link className="text-bad" href={`/runs?status=stuck&flow=${encodeURIComponent(f.name)}`}>
                      {v.stuck}
                    </Link>
                  ) : (
                    0
                  )}
                </td>
              </tr>
            )),
          )}
        </tbody>
      </table>
    </div>
  );
}

function ProcessesTable({ processes }: { processes: Definitions['processes'] }) {
  return (
    <div className="table-scroll" role="region" aria-label="Processes" tabIndex={0}>
      <table className="table" data-testid="processes-table">
        <thead>
          <tr>
            <th>Process</th>
            <th>States</th>
            <th>Open instances by state</th>
            <th className="num">Active</th>
            <th className="num">Quarantined</th>
          </tr>
        </thead>
        <tbody>
          {processes.map((p) => (
            <tr key={p.name} data-testid="process-row" data-process={p.name}>
              <td>
                <span className="mono">{p.name}</span>{' '}
                {p.registered ? null : <span className="badge badge-warn">not registered</span>}
                {p.operatorCommands.length > 0 ? (
                  <div className="muted">operator commands: {p.operatorCommands.join(', ')}</div>
                ) : null}
              </td>
              <td>
                {p.registered ? (
                  <>
                    {p.states.length} states, {p.transitions} transitions
                    <div className="muted">
                      starts in {p.initial}; ends in {p.final.join(', ') || '—'}
                    </div>
                  </>
                ) : (
                  <span className="muted">definition not loaded here</span>
                )}
              </td>
              <td>
                {p.byState.length === 0 ? (
                  <span className="muted">none open</span>
                ) : (
                  p.byState.map((s) => (
                    <span key={s.state} className="count-pill" data-testid="process-state-count">
                      <Link href={instancesIn(s.state, s.active === 0)}>{s.state}</Link> <strong>{s.active}</strong>
                      {s.quarantined > 0 ? (
                        <Link className="text-bad" href={instancesIn(s.state, true)}>
                          {' '}
                          +{s.quarantined} quarantined
                        </Link>
                      ) : null}
                    </span>
                  ))
                )}
              </td>
              <td className="num">{p.active}</td>
              <td className="num">{p.quarantined}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The flows and processes this control plane runs, their versions, and what is open in each now. */
export function DefinitionsView() {
  const trpc = useTRPC();
  const defs = useQuery(trpc.definitions.list.queryOptions(undefined, { refetchInterval: refreshMs }));
  return (
    <>
      <LivePageHead title="Definitions" query={defs} refreshMs={refreshMs} what="definitions" />
      {defs.data ? (
        <>
          <section aria-labelledby="flows-heading">
            <h2 id="flows-heading">Flows</h2>
            <p className="muted">
              Open runs per version: a run opened on an older version replays that version&apos;s code.
            </p>
            {defs.data.flows.length > 0 ? (
              <FlowsTable flows={defs.data.flows} />
            ) : (
              <p className="empty">No flow is registered and no run is open.</p>
            )}
          </section>
          <section aria-labelledby="processes-heading">
            <h2 id="processes-heading">Processes</h2>
            {defs.data.processes.length > 0 ? (
              <ProcessesTable processes={defs.data.processes} />
            ) : (
              <p className="empty">No process is registered and no instance is open.</p>
            )}
          </section>
        </>
      ) : null}
    </>
  );
}
