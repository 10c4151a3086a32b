/** A node of PostgreSQL's EXPLAIN (FORMAT JSON) plan, the fields read here. */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Plan Rows': number;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Sort Method'?: string;
  Plans?: PlanNode[];
}

/** What makes a plan wrong at scale, with the node that does it. */
export interface PlanFinding {
  kind: 'seq_scan' | 'big_sort' | 'big_read';
  detail: string;
}

/** The tables that grow with the history: a sequential scan of one costs what the history costs. */
/** Rows a console read may touch: just above the lists' count cap (10,001 index entries per count). */
export const bigRows = 12_000;

export const bigTables = [
  'flow_runs',
  'action_runs',
  'compensation_runs',
  'flow_events',
  'anomaly_log',
  'saga_instances',
  'process_transitions',
  'process_timeouts',
  'outbox',
  'inbox',
  'repair_commands',
  'audit_events',
];

function* walk(node: PlanNode): Generator<PlanNode> {
  yield node;
  for (const child of node.Plans ?? []) yield* walk(child);
}

/** The nodes read straight under a Limit: they stop when it has its rows. */
function limitedNodes(root: PlanNode): Set<PlanNode> {
  const limited = new Set<PlanNode>();
  for (const node of walk(root)) if (node['Node Type'] === 'Limit') for (const c of node.Plans ?? []) limited.add(c);
  return limited;
}

/** Rows a node produced in all its loops (EXPLAIN ANALYZE), or the planner's estimate without ANALYZE. */
const produced = (n: PlanNode) => (n['Actual Rows'] ?? n['Plan Rows']) * (n['Actual Loops'] ?? 1);

/** Rows a scan read: those it produced and those its filter threw away. */
const read = (n: PlanNode) => produced(n) + (n['Rows Removed by Filter'] ?? 0) * (n['Actual Loops'] ?? 1);

/**
 * A sequential scan of a big table is a fault once it reads more than this: below it (a journal
 * that is still small) reading the table is the planner's right choice and costs nothing. A scan
 * straight under a Limit that stopped within `bigRows` is bounded whatever the table's size (a
 * capped count of a status most rows have: at 1 M runs, 11 k rows read of 200 k instances).
 */
export const seqScanFloor = 1_000;

/**
 * The faults of a plan at scale: a sequential scan of a big table (above `seqScanFloor` rows), a sort whose input has more than
 * `bigRows` rows (a keyset page sorts nothing: its index gives the order), and a scan that reads more
 * than `bigRows` rows (kept or filtered out) in one loop — a count or a filter walking the history
 * through an index that does not fit it. Many bounded reads (a capped count per status, a primary-key
 * probe per row of a window) are each judged alone.
 */
export function planFindings(root: PlanNode, bigRows: number): PlanFinding[] {
  const findings: PlanFinding[] = [];
  const limited = limitedNodes(root);
  for (const node of walk(root)) {
    const table = node['Relation Name'];
    const bounded = limited.has(node) && read(node) <= bigRows;
    if (node['Node Type'] === 'Seq Scan' && table && bigTables.includes(table) && read(node) > seqScanFloor && !bounded)
      findings.push({ kind: 'seq_scan', detail: `Seq Scan on ${table} (${Math.round(produced(node))} rows)` });
    if (node['Node Type'] === 'Sort' || node['Node Type'] === 'Incremental Sort') {
      const input = node.Plans?.[0];
      // Per loop, as a read is: a sort repeated once per bucket of a chart sorts one bucket each time.
      const rows = input ? produced(input) / (node['Actual Loops'] ?? 1) : 0;
      if (rows > bigRows)
        findings.push({
          kind: 'big_sort',
          detail: `${node['Node Type']} of ${Math.round(rows)} rows (${node['Sort Method'] ?? 'planned'})`,
        });
    }
    if (table) {
      const perLoop = read(node) / (node['Actual Loops'] ?? 1);
      if (perLoop > bigRows && node['Node Type'] !== 'Seq Scan')
        findings.push({
          kind: 'big_read',
          detail: `${node['Node Type']} on ${table}${node['Index Name'] ? ` using ${node['Index Name']}` : ''} reads ${Math.round(perLoop)} rows per loop`,
        });
    }
  }
  return findings;
}

/** The plan in one line: each node's type, relation and index, depth first. */
export function planOutline(root: PlanNode): string {
  return [...walk(root)]
    .map((n) =>
      [n['Node Type'], n['Relation Name'], n['Index Name'] && `using ${n['Index Name']}`].filter(Boolean).join(' '),
    )
    .join(' > ');
}
