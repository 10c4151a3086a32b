'use client';

import { Background, Controls, MarkerType, Position, ReactFlow, type Edge, type Node } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import ELK from 'elkjs/lib/elk.bundled.js';
import { useEffect, useId, useMemo, useState } from 'react';
import type { InstanceDetail } from './instance-types';
import { machineEdges, type MachineEdge } from './state-machine-graph';
import { ScrollBox } from '@/ui/scroll-box';

const elk = new ELK();
const nodeHeight = 40;
const nodeWidth = (state: string) => Math.max(110, 16 + state.length * 8);

/** Positions from ELK's layered layout, left to right; self-loops are left to the text alternative. */
async function layout(states: string[], edges: MachineEdge[]): Promise<Record<string, { x: number; y: number }>> {
  const graph = await elk.layout({
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.spacing.nodeNode': '40',
      'elk.layered.spacing.nodeNodeBetweenLayers': '30',
      'elk.edgeLabels.inline': 'true',
    },
    children: states.map((s) => ({ id: s, width: nodeWidth(s), height: nodeHeight })),
    // Each edge's label is given its size, so ELK leaves room for it between the layers.
    edges: edges
      .filter((e) => e.from !== e.to)
      .map((e) => ({
        id: e.id,
        sources: [e.from],
        targets: [e.to],
        labels: [{ text: edgeLabel(e), width: edgeLabel(e).length * 5.5, height: 12 }],
      })),
  });
  return Object.fromEntries((graph.children ?? []).map((c) => [c.id, { x: c.x ?? 0, y: c.y ?? 0 }]));
}

const triggerText = (e: MachineEdge) =>
  e.triggers.map((t) => (t.kind === 'timeout' ? `timeout ${t.name}` : t.name)).join(', ');
const edgeLabel = (e: MachineEdge) => `${triggerText(e)}${e.taken > 0 ? ` ×${e.taken}` : ''}`;

/**
 * The process's state machine, drawn (React Flow, laid out by ELK) from describeProcess: every state,
 * the current one highlighted, each edge labelled with what takes it and how often this instance
 * took it. The table under it says the same in text (the drawing's accessible alternative).
 */
export function StateMachine({ detail }: { detail: InstanceDetail }) {
  const { process, instance, history, operatorCommands } = detail;
  const captionId = useId();
  const edges = useMemo(
    () => machineEdges(process.transitions, operatorCommands, history),
    [process.transitions, operatorCommands, history],
  );
  const [positions, setPositions] = useState<Record<string, { x: number; y: number }> | null>(null);
  const [layoutError, setLayoutError] = useState<string | null>(null);
  const statesKey = process.states.join('|');
  const edgesKey = edges.map((e) => e.id).join('|');
  useEffect(() => {
    let live = true;
    layout(process.states, edges).then(
      (p) => live && setPositions(p),
      (err: unknown) => live && setLayoutError(err instanceof Error ? err.message : String(err)),
    );
    return () => {
      live = false;
    };
    // Lay out again only when the graph's shape changes, not on every poll.
  }, [statesKey, edgesKey]);
  if (!process.registered) return null;
  const final = new Set(process.final);
  const nodes: Node[] = positions
    ? process.states.map((s) => {
        const current = s === instance.currentState;
        return {
          id: s,
          position: positions[s] ?? { x: 0, y: 0 },
          data: { label: current ? `${s} (current)` : s },
          className: ['sm-node', current ? 'sm-current' : '', final.has(s) ? 'sm-final' : ''].join(' '),
          style: { width: nodeWidth(s) + (current ? 64 : 0), height: nodeHeight },
          domAttributes: { 'data-testid': 'sm-node', 'data-state': s, 'data-current': current ? 'yes' : 'no' },
          // ELK lays the graph out left to right: edges leave on the right and arrive on the left.
          sourcePosition: Position.Right,
          targetPosition: Position.Left,
          draggable: false,
          connectable: false,
          selectable: false,
        } as Node;
      })
    : [];
  const flowEdges: Edge[] = edges
    .filter((e) => e.from !== e.to)
    .map((e) => ({
      id: e.id,
      source: e.from,
      target: e.to,
      label: edgeLabel(e),
      markerEnd: { type: MarkerType.ArrowClosed },
      className: e.taken > 0 ? 'sm-edge sm-taken' : 'sm-edge',
      animated: false,
      selectable: false,
      focusable: false,
    }));
  return (
    <figure className="state-machine" aria-labelledby={captionId} data-testid="state-machine">
      <figcaption id={captionId}>
        {process.states.length} states; the instance is in{' '}
        <strong data-testid="sm-current">{instance.currentState}</strong>
        {final.has(instance.currentState) ? ' (final)' : ''}. Numbers on edges count the transitions it took.
      </figcaption>
      <div
        className="state-machine-canvas"
        role="group"
        aria-label="Drawing of the state machine (the table below says the same in text)"
      >
        {layoutError ? (
          <p className="notice notice-warn">
            The drawing could not be laid out ({layoutError}); the table below says the same.
          </p>
        ) : positions ? (
          <ReactFlow
            nodes={nodes}
            edges={flowEdges}
            fitView
            nodesDraggable={false}
            nodesConnectable={false}
            nodesFocusable={false}
            edgesFocusable={false}
            elementsSelectable={false}
            panOnDrag
            zoomOnScroll={false}
            preventScrolling={false}
            minZoom={0.2}
          >
            <Background gap={24} />
            <Controls showInteractive={false} />
          </ReactFlow>
        ) : (
          <p className="muted">Laying out…</p>
        )}
      </div>
      <ScrollBox label="State machine transitions">
        <table className="table" data-testid="sm-table">
          <caption className="muted">
            The state machine in text: every transition, what takes it, how often it was taken.
          </caption>
          <thead>
            <tr>
              <th scope="col">From</th>
              <th scope="col">To</th>
              <th scope="col">On</th>
              <th scope="col" className="num">
                Taken
              </th>
            </tr>
          </thead>
          <tbody>
            {edges.map((e) => (
              <tr key={e.id} data-testid="sm-edge" data-from={e.from} data-to={e.to}>
                <td className={e.from === instance.currentState ? 'sm-current-text' : undefined}>{e.from}</td>
                <td className={e.to === instance.currentState ? 'sm-current-text' : undefined}>{e.to}</td>
                <td>{triggerText(e)}</td>
                <td className="num" data-testid="sm-edge-taken">
                  {e.taken}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollBox>
    </figure>
  );
}
