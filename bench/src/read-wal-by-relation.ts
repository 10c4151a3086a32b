import type pg from 'pg';

/** WAL records of one kind on one relation between two LSNs (pg_walinspect). */
export interface WalGroup {
  readonly relation: string;
  readonly resourceManager: string;
  readonly recordType: string;
  readonly records: number;
  readonly bytes: number;
  /** Of those bytes, full-page images. */
  readonly fpiBytes: number;
}

/**
 * Every WAL record written between `start` and `end`, grouped by the relation of its first block
 * reference (named from the catalog of the database `client` is connected to; another database's or
 * a shared catalog's relation shows as `rel <relfilenode>`, a record without a block as `-`), its
 * resource manager and its record type. A B-tree `INSERT_LEAF` is one index entry written.
 * Needs the pg_walinspect extension (PostgreSQL 15) in `client`'s database and a superuser.
 */
export async function readWalByRelation(client: pg.Client, start: string, end: string): Promise<WalGroup[]> {
  const result = await client.query<Record<string, string>>(
    `with r as (
       select resource_manager, record_type, record_length, fpi_length,
              (regexp_match(block_ref, 'rel \\d+/\\d+/(\\d+)'))[1]::oid as node
         from pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)
     )
     select coalesce(c.relname, 'rel ' || r.node::text, '-') as relation, r.resource_manager, r.record_type,
            count(*) as records, sum(r.record_length) as bytes, sum(r.fpi_length) as fpi_bytes
       from r left join pg_class c on c.relfilenode = r.node and r.node <> 0
      group by 1, 2, 3 order by count(*) desc`,
    [start, end],
  );
  return result.rows.map((r) => ({
    relation: r.relation!,
    resourceManager: r.resource_manager!,
    recordType: r.record_type!,
    records: Number(r.records),
    bytes: Number(r.bytes),
    fpiBytes: Number(r.fpi_bytes),
  }));
}
