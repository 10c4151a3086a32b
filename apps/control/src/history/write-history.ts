import type { ServerResponse } from 'node:http';
import type { HistoryDocument } from './history-pages.ts';

/**
 * Rows are written in chunks of about this many characters, under V8's large-object size (128 KB):
 * a chunk is young garbage a scavenge frees, not a large object that waits for a full collection.
 */
const chunkChars = 48 * 1024;

/** Thrown inside the writer when the client went away: the download stops reading. */
class ClientGone extends Error {}

/** Thrown when the client read nothing for the stall limit: the connection is closed, its slot freed. */
export class ClientStalled extends Error {
  constructor(readonly stallMs: number) {
    super(`the client read nothing for ${stallMs / 1000} s`);
  }
}

/**
 * JSON.stringify with two-space indentation that writes bigint ids and sequences as strings (JSON
 * has no 64-bit integers), its lines after the first indented by `indent`: a value written where
 * `JSON.stringify(document, ..., 2)` would have put it, byte for byte.
 */
function jsonAt(value: unknown, indent: string): string {
  const text = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2);
  return text.replaceAll('\n', `\n${indent}`);
}

/**
 * Writes `chunk` and waits while the socket's buffer is full (backpressure), so the server never
 * holds more than a page ahead of the client. A client that disconnects ends the wait and the
 * download (`ClientGone`).
 */
async function sendChunk(res: ServerResponse, chunk: string, stallMs: number): Promise<void> {
  if (res.destroyed || res.writableEnded) throw new ClientGone();
  if (res.write(chunk)) return;
  // A client that stops reading would hold its download slot (and its page) for ever: past the stall
  // limit without a drain, the connection is closed (SAGAFLOW_HISTORY_DOWNLOAD_STALL_SECONDS).
  const drained = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => finish(false), stallMs);
    const finish = (ok: boolean) => {
      clearTimeout(timer);
      res.off('drain', onDrain);
      res.off('close', onDrain);
      resolve(ok);
    };
    const onDrain = () => finish(true);
    res.on('drain', onDrain);
    res.on('close', onDrain);
  });
  if (!drained) throw new ClientStalled(stallMs);
  if (res.destroyed) throw new ClientGone();
}

/**
 * Streams `{ exportedAt, kind, <head>, ...sections }` to `res` as `JSON.stringify(..., 2)` would
 * have written it whole: each section's rows as they are read, a page at a time. A client that
 * disconnects stops the reads (no statement is issued after it goes; none holds a connection
 * between pages). If the head row is gone at the end (retention pruned the run meanwhile) the body
 * is cut before its end rather than finished as a complete-looking partial document; if a section
 * lost rows meanwhile, its pages throw `HistoryShrank`, which the route answers the same way.
 */
export async function writeHistory(
  res: ServerResponse,
  exportedAt: Date,
  doc: HistoryDocument,
  stallMs: number,
): Promise<void> {
  const send = (r: ServerResponse, chunk: string) => sendChunk(r, chunk, stallMs);
  try {
    await send(
      res,
      `{\n  "exportedAt": ${jsonAt(exportedAt, '  ')},\n  "kind": ${jsonAt(doc.kind, '  ')},\n  ${jsonAt(doc.kind, '')}: ${jsonAt(doc.head, '  ')}`,
    );
    for (const section of doc.sections) {
      let rows = 0;
      await send(res, `,\n  ${jsonAt(section.key, '')}: [`);
      for await (const page of section.pages()) {
        if (res.destroyed) throw new ClientGone();
        let chunk = '';
        for (const row of page) {
          chunk += `${rows++ === 0 ? '' : ','}\n    ${jsonAt(row, '    ')}`;
          if (chunk.length >= chunkChars) {
            await send(res, chunk);
            chunk = '';
          }
        }
        if (chunk !== '') await send(res, chunk);
      }
      await send(res, rows === 0 ? ']' : '\n  ]');
    }
    if (!(await doc.stillThere())) {
      res.destroy();
      return;
    }
    await send(res, '\n}');
    res.end();
  } catch (err) {
    if (err instanceof ClientGone) return;
    throw err;
  }
}
