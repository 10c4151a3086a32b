import type { Metadata } from 'next';
import { parseInstancesFilter } from '@/instances/instances-filter';
import { InstancesList } from '@/instances/instances-list';

export const metadata: Metadata = { title: 'Instances' };

export default async function InstancesPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  return <InstancesList filter={parseInstancesFilter(await searchParams)} />;
}
