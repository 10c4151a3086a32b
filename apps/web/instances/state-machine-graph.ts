/** The process as the drawing and its text alternative need it: states, and transitions folded per edge. */
export interface MachineEdge {
  id: string;
  from: string;
  to: string;
  /** The messages, timeouts and operator commands that take this edge. */
  triggers: { name: string; kind: 'message' | 'timeout' | 'command' }[];
  /** How many times the instance took this edge (from its history: applied messages and repairs). */
  taken: number;
}

interface Transition {
  on: string;
  kind: 'message' | 'timeout';
  from: string[];
  to: string;
}

/**
 * Folds the definition's transitions and operator commands into one edge per (from, to), and counts
 * the instance's history rows on each (applied messages and repairs; a row whose edge the
 * definition does not declare, such as a forced transition, gets an edge of its own). A release's
 * audit row is not a move: the instance's state does not change when its quarantine is lifted.
 */
export function machineEdges(
  transitions: Transition[],
  commands: { name: string; from: string[]; to: string }[],
  history: { from: string; to: string; outcome: string; messageType: string; detail?: unknown }[],
): MachineEdge[] {
  const edges = new Map<string, MachineEdge>();
  const edge = (from: string, to: string) => {
    const id = `${from}->${to}`;
    let e = edges.get(id);
    if (!e) {
      e = { id, from, to, triggers: [], taken: 0 };
      edges.set(id, e);
    }
    return e;
  };
  for (const t of transitions) for (const from of t.from) edge(from, t.to).triggers.push({ name: t.on, kind: t.kind });
  for (const c of commands)
    for (const from of c.from) edge(from, c.to).triggers.push({ name: c.name, kind: 'command' });
  for (const h of history) {
    if (h.outcome !== 'applied' && h.outcome !== 'repair') continue;
    // A release's audit row stays at the state it found: the release moved no edge (a release by
    // retry has the message's own applied row for its move).
    if (h.outcome === 'repair' && isRelease(h.detail)) continue;
    const e = edge(h.from, h.to);
    e.taken += 1;
    if (e.triggers.length === 0) e.triggers.push({ name: h.messageType, kind: 'command' });
  }
  return [...edges.values()];
}

const isRelease = (detail: unknown) => typeof detail === 'object' && detail !== null && 'release' in detail;
