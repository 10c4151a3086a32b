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

/** JSON has no 64-bit integers: bigint ids and sequences are written as strings. */
const bigintsAsStrings = (_key: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);

/**
 * JSON.stringify with two-space indentation and bigints as strings, its lines after the first
 * indented by `indent`: a value written where `JSON.stringify(document, ..., 2)` would have put it,
 * byte for byte.
 */
function jsonAt(value: unknown, indent: string): string {
  return JSON.stringify(value, bigintsAsStrings, 2).replaceAll('\n', `\n${indent}`);
}

const rowsOpen = '[\n  ['.length;
const rowsClose = '\n  ]\n]'.length;

/**
 * `rows` as `JSON.stringify(document, ..., 2)` writes them inside a section's array: each on a new
 * line at depth 2, separated by commas. One JSON.stringify of `[rows]` nested once more puts them at
 * that depth, and the brackets around them are cut off: no row is stringified alone and re-indented
 * (the largest item of a download's CPU profile: 0.46 s of a 67 MB one, 0.33 s this way, ADR 0142).
 */
function rowsAtDepthTwo(rows: readonly unknown[]): string {
  const text = JSON.stringify([rows], bigintsAsStrings, 2);
  return text.slice(rowsOpen, text.length - rowsClose);
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
      // Rows are stringified in groups of about `chunkChars`, sized from the last group's characters per row.
      let group = 1;
      for await (const page of section.pages()) {
        if (res.destroyed) throw new ClientGone();
        for (let i = 0; i < page.length;) {
          const n = Math.min(group, page.length - i);
          const text = rowsAtDepthTwo(page.slice(i, i + n));
          await send(res, rows === 0 ? text : `,${text}`);
          rows += n;
          i += n;
          group = Math.max(1, Math.floor((n * chunkChars) / text.length));
        }
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
