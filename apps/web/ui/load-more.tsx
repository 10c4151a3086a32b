/**
 * The foot of a paged list: "Load more" while the API has a next cursor, else how many rows match.
 * Hidden while the rows on screen are the previous filter's (kept while the new one loads): their
 * cursor does not belong to this filter.
 */
export function LoadMore({
  query,
  shown,
  noun,
}: {
  query: {
    hasNextPage: boolean;
    isFetchingNextPage: boolean;
    isPlaceholderData: boolean;
    fetchNextPage: () => Promise<unknown>;
  };
  shown: number;
  noun: string;
}) {
  if (shown === 0 || query.isPlaceholderData) return null;
  return (
    <p className="list-more">
      {query.hasNextPage ? (
        <button
          type="button"
          onClick={() => void query.fetchNextPage()}
          disabled={query.isFetchingNextPage}
          data-testid="load-more"
        >
          {query.isFetchingNextPage ? 'Loading…' : 'Load more'}
        </button>
      ) : (
        <span className="muted" data-testid="list-end">
          All {shown} matching {noun} shown.
        </span>
      )}
    </p>
  );
}
