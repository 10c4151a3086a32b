import { describeProcess, openRunStatuses } from '@sagaflow/engine';
import { readInstanceCounts } from '../../metrics/reads/read-instance-counts.ts';
import type { SqlReader } from '../../metrics/reads/sql-reader.ts';
import { withReadSnapshot } from '../../metrics/reads/with-read-snapshot.ts';
import type { ApiContext } from '../trpc.ts';

/** A flow: the version this control plane runs, and its open runs per version and status. */
export interface FlowDefinitionView {
  name: string;
  /** The registered version; null when no code of that name is registered here (its runs are stuck: unknown_flow). */
  registeredVersion: number | null;
  versions: { version: number; open: Record<string, number>; stuck: number }[];
  openTotal: number;
}

/** A process: its states (from the definition), and its open instances per state. */
export interface ProcessDefinitionView {
  name: string;
  registered: boolean;
  initial: string | null;
  final: string[];
  states: string[];
  transitions: number;
  operatorCommands: string[];
  /** Per state: ACTIVE and QUARANTINED instances. */
  byState: { state: string; active: number; quarantined: number }[];
  active: number;
  quarantined: number;
}

interface OpenRunCount {
  flow: string;
  version: number;
  status: string;
  count: number;
  stuck: number;
}

/**
 * Open runs by flow, version and status, and how many of them are stuck: two index-only reads of
 * partial indexes that hold the open runs and the stuck runs alone (migration 0020), so the cost is
 * what is in flight, never the history. The predicates are the indexes', word for word (a bound
 * array would leave the planner unable to prove the open-runs index fits).
 */
async function readOpenRunCounts(db: SqlReader): Promise<OpenRunCount[]> {
  const open = await db.$queryRaw<Omit<OpenRunCount, 'stuck'>[]>`
    select flow_name as flow, flow_version as version, status, count(*)::int as count
      from "sagaflow"."flow_runs"
     where status in ('Pending', 'Running', 'Waiting', 'Compensating')
     group by 1, 2, 3
     order by 1, 2, 3`;
  const stuck = await db.$queryRaw<Omit<OpenRunCount, 'count'>[]>`
    select flow_name as flow, flow_version as version, status, count(*)::int as stuck
      from "sagaflow"."flow_runs"
     where stuck_reason is not null and status = any(${[...openRunStatuses]}::text[])
     group by 1, 2, 3`;
  const key = (r: { flow: string; version: number; status: string }) => JSON.stringify([r.flow, r.version, r.status]);
  const stuckOf = new Map(stuck.map((r) => [key(r), r.stuck]));
  return open.map((r) => ({ ...r, stuck: stuckOf.get(key(r)) ?? 0 }));
}

const byName = <T extends { name: string }>(a: T, b: T) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * The flows and processes this control plane runs, with live counts: open runs per version and
 * status (finished runs are history: the runs list counts them), open instances per state. A name
 * found only in the data (runs of a flow no code here registers) is listed as unregistered, since
 * those are exactly the runs that need someone.
 */
export async function readDefinitions(ctx: Pick<ApiContext, 'db' | 'engine'>, options: { timeoutMs?: number } = {}) {
  const { runs, instances } = await withReadSnapshot(ctx.db, options.timeoutMs ?? 5000, async (tx) => ({
    runs: await readOpenRunCounts(tx),
    instances: await readInstanceCounts(tx),
  }));

  const flows = new Map<string, FlowDefinitionView>();
  const flowOf = (name: string) => {
    let f = flows.get(name);
    if (!f) flows.set(name, (f = { name, registeredVersion: null, versions: [], openTotal: 0 }));
    return f;
  };
  for (const def of ctx.engine.runtime.registry.flows.values()) flowOf(def.name).registeredVersion = def.version;
  for (const r of runs) {
    const f = flowOf(r.flow);
    let v = f.versions.find((x) => x.version === r.version);
    if (!v) f.versions.push((v = { version: r.version, open: {}, stuck: 0 }));
    v.open[r.status] = r.count;
    v.stuck += r.stuck;
    f.openTotal += r.count;
  }
  for (const f of flows.values()) {
    if (f.registeredVersion !== null && !f.versions.some((v) => v.version === f.registeredVersion))
      f.versions.push({ version: f.registeredVersion, open: {}, stuck: 0 });
    f.versions.sort((a, b) => b.version - a.version);
  }

  const processes = new Map<string, ProcessDefinitionView>();
  for (const def of ctx.engine.processes.definitions.values()) {
    const d = describeProcess(def);
    processes.set(d.name, {
      name: d.name,
      registered: true,
      initial: d.initial,
      final: d.final,
      states: d.states,
      transitions: d.transitions.length,
      operatorCommands: d.operatorCommands.map((c) => c.name),
      byState: [],
      active: 0,
      quarantined: 0,
    });
  }
  for (const i of instances) {
    let p = processes.get(i.process);
    if (!p)
      processes.set(
        i.process,
        (p = {
          name: i.process,
          registered: false,
          initial: null,
          final: [],
          states: [],
          transitions: 0,
          operatorCommands: [],
          byState: [],
          active: 0,
          quarantined: 0,
        }),
      );
    let s = p.byState.find((x) => x.state === i.state);
    if (!s) p.byState.push((s = { state: i.state, active: 0, quarantined: 0 }));
    if (i.status === 'QUARANTINED') {
      s.quarantined += i.count;
      p.quarantined += i.count;
    } else {
      s.active += i.count;
      p.active += i.count;
    }
  }
  for (const p of processes.values()) {
    const order = (state: string) => {
      const at = p.states.indexOf(state);
      return at === -1 ? p.states.length : at;
    };
    p.byState.sort((a, b) => order(a.state) - order(b.state) || (a.state < b.state ? -1 : 1));
  }
  return { flows: [...flows.values()].sort(byName), processes: [...processes.values()].sort(byName) };
}
