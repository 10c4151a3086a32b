import type pg from 'pg';
import type { TransactionLimits } from './database.ts';
import type { RawResult, RawStatement } from './raw-db.ts';
import {
  describedOn,
  prepareValue,
  rememberDescribed,
  rowOf,
  shapeOf,
  type Column,
  type PgConnection,
  type RowShape,
} from './raw-query.ts';
import { rawParameter } from './raw-values.ts';
import { connectWithin, isStalePlan } from './run-in-transaction.ts';
import { namedStatement, renameStatement, type NamedStatement } from './statement-names.ts';

/** node-postgres's connection, the parts a round writes with and the statements it keeps (untyped in @types/pg). */
interface RoundConnection extends PgConnection {
  parse(config: { text: string; name: string; types: undefined }): void;
  describe(config: { type: 'P'; name: string }): void;
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
  stream: { cork?: () => void; uncork?: () => void };
}

/** One statement of a round as it goes out: its prepared name (none: parsed every time), its text and its values. */
interface RoundPart {
  name: string | undefined;
  text: string;
  values: unknown[];
}

/** The row count a CommandComplete's tag ends with (`SELECT 3`, `INSERT 0 3`, `UPDATE 3`); 0 for a tag without one. */
function rowCountOf(tag: string | undefined): number {
  const match = tag === undefined ? null : /(\d+)$/.exec(tag);
  return match === null ? 0 : Number(match[1]);
}

/**
 * Several statements in ONE round trip and ONE implicit transaction (ADR 0066): for each, a Parse
 * where this connection has not prepared its name, a Bind, a Describe where this connection has not
 * described it (ADR 0053) and an Execute, then a single Sync, corked into one write. The server runs
 * them in order inside one transaction and commits it at the Sync: one commit, one WAL flush. An error
 * in any of them makes the server skip the rest up to the Sync and roll the whole round back, so a
 * refusal (an ErrorResponse, the session alive) still means that nothing of it was written.
 *
 * A pg Submittable of the engine's own, driven by the client as its own queries are: rows and
 * CommandCompletes come in statement order, so each is the current statement's, and the client's
 * ParseComplete bookkeeping (which reads the active query's `name` and `text`) follows the current
 * statement. Its outcome is `result`, each statement's rows and row count, in order; on failure the
 * error carries `roundIndex`, the statement it came on.
 */
export class RawRound {
  /** The statement being answered: pg's client reads these two when a ParseComplete comes. */
  name: string | undefined;
  text: string;
  readonly result: Promise<RawResult[]>;
  private index = 0;
  private readonly shapes: (RowShape | undefined)[];
  private readonly received: unknown[][];
  private readonly rowCounts: number[];
  /** Which statements this round sent a Parse for (their names are pg's "submitted" until parsed). */
  private readonly parsing: boolean[];
  private parseError: unknown;
  private connection: RoundConnection | undefined;
  private settle: (err: Error | undefined, results?: RawResult[]) => void = () => undefined;

  constructor(private readonly parts: readonly RoundPart[]) {
    this.name = parts[0]?.name;
    this.text = parts[0]?.text ?? '';
    this.shapes = parts.map(() => undefined);
    this.received = parts.map(() => []);
    this.rowCounts = parts.map(() => 0);
    this.parsing = parts.map(() => false);
    this.result = new Promise<RawResult[]>((resolve, reject) => {
      let settled = false;
      this.settle = (err, results) => {
        if (settled) return;
        settled = true;
        if (err !== undefined) reject(err);
        else resolve(results!);
      };
    }).catch((err: Error) => {
      // As node-postgres does: the stack then leads back to the round's sender, not to the socket.
      Error.captureStackTrace(err);
      throw err;
    });
  }

  /** Called by the client to send it; an error returned means nothing was written (the client reports it). */
  submit(connection: RoundConnection): Error | null {
    let values: unknown[][];
    try {
      // Every value mapped before anything is written: a value pg cannot map must fail the round
      // before its first Execute is on the wire, or the statements before it would commit at the Sync.
      values = this.parts.map((part) => part.values.map((value) => prepareValue(value)));
    } catch (err) {
      return err as Error;
    }
    this.connection = connection;
    const described = describedOn.get(connection);
    connection.stream.cork?.();
    try {
      this.parts.forEach((part, i) => {
        const { name } = part;
        const parsed =
          name !== undefined &&
          (connection.parsedStatements[name] !== undefined || connection.submittedNamedStatements[name] !== undefined);
        if (!parsed) {
          connection.parse({ text: part.text, name: name ?? '', types: undefined });
          if (name !== undefined) {
            connection.submittedNamedStatements[name] = part.text;
            this.parsing[i] = true;
          }
        }
        connection.bind({
          portal: '',
          statement: name ?? '',
          values: values[i]!,
          binary: false,
          valueMapper: prepareValue,
        });
        const shape = name === undefined ? undefined : described?.get(name);
        if (shape === undefined) connection.describe({ type: 'P', name: '' });
        else this.shapes[i] = shape;
        connection.execute({ portal: '', rows: undefined });
      });
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  handleRowDescription(message: { fields: Column[] }): void {
    const name = this.parts[this.index]?.name;
    const shape = shapeOf(name, message.fields);
    this.shapes[this.index] = shape;
    rememberDescribed(this.connection, name, shape);
  }

  handleDataRow(message: { fields: (string | null)[] }): void {
    if (this.parseError !== undefined) return;
    try {
      this.received[this.index]!.push(rowOf(this.shapes[this.index], message.fields));
    } catch (err) {
      // Reported once the round has its ReadyForQuery (it committed by then): the answer is not usable.
      this.parseError = err;
    }
  }

  handleCommandComplete(message: { text?: string }): void {
    this.rowCounts[this.index] = rowCountOf(message.text);
    this.parsing[this.index] = false;
    this.index += 1;
    // The next ParseComplete, if any, is the next statement's.
    this.name = this.parts[this.index]?.name;
    this.text = this.parts[this.index]?.text ?? '';
  }

  handleEmptyQuery(): void {
    this.handleCommandComplete({});
  }

  handlePortalSuspended(): void {
    // Never asked for: every Execute reads all its rows.
  }

  handleCopyInResponse(connection: { sendCopyFail(message: string): void }): void {
    connection.sendCopyFail('a round of the engine sends no COPY data');
  }

  handleCopyData(): void {
    // Never asked for.
  }

  /**
   * A failure: the server's ErrorResponse (the round rolled back, the rest skipped) or the client's
   * (a connection lost: whether the Sync committed is not known). The statements after the failing
   * one were never parsed, so their names must not look prepared on this connection.
   */
  handleError(err: Error): void {
    const connection = this.connection;
    if (connection !== undefined)
      this.parts.forEach((part, i) => {
        if (i >= this.index && this.parsing[i] && part.name !== undefined)
          delete connection.submittedNamedStatements[part.name];
      });
    this.settle(Object.assign(err, { roundIndex: this.index }));
  }

  handleReadyForQuery(): void {
    if (this.parseError !== undefined) {
      this.settle(this.parseError as Error);
      return;
    }
    this.settle(
      undefined,
      this.received.map((rows, i) => ({ rows, rowCount: this.rowCounts[i]! })),
    );
  }
}

/**
 * Statements as one round on one client (see {@link RawRound}), each under its prepared name when its
 * text has one. A stale plan of one of them (a migration changed its result) renames that one, so that
 * it is prepared afresh when it is sent next; the round itself wrote nothing.
 */
export async function roundOn(client: Pick<pg.ClientBase, 'query'>, statements: readonly RawStatement[]) {
  const named: (NamedStatement | undefined)[] = statements.map((s) => namedStatement(s.text));
  const round = new RawRound(
    statements.map((s, i) => ({
      name: named[i]?.name,
      text: named[i]?.text ?? s.text,
      values: s.values.map(rawParameter),
    })),
  );
  try {
    client.query(round as unknown as pg.Submittable);
    return await round.result;
  } catch (err) {
    const at = (err as { roundIndex?: number }).roundIndex;
    const stale = at === undefined ? undefined : named[at];
    if (stale !== undefined && isStalePlan(err)) renameStatement(stale);
    throw err;
  }
}

/**
 * A round (see {@link RawRound}) on ONE pooled connection, waiting at most `waitMs` for it as
 * `inPgStatement` does; a connection on which the round failed is released with the error, so the
 * pool destroys it.
 */
export async function inPgRound(
  pool: pg.Pool,
  statements: readonly RawStatement[],
  limits: Pick<TransactionLimits, 'waitMs'> = {},
): Promise<RawResult[]> {
  const client = await connectWithin(pool, limits.waitMs);
  let failed: Error | undefined;
  const onError = (err: Error) => void (failed ??= err);
  client.on('error', onError);
  try {
    return await roundOn(client, statements);
  } catch (err) {
    failed ??= err as Error;
    throw err;
  } finally {
    client.release(failed);
    if (!failed) client.removeListener('error', onError);
  }
}
