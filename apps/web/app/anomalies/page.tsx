import type { Metadata } from 'next';
import { AnomaliesList } from '@/anomalies/anomalies-list';
import { anomaliesHref, parseAnomaliesFilter } from '@/anomalies/anomalies-filter';

export const metadata: Metadata = { title: 'Anomaly log' };

export default async function AnomaliesPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const filter = parseAnomaliesFilter(await searchParams);
  return <AnomaliesList key={anomaliesHref(filter)} filter={filter} />;
}
