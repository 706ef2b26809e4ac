/** Paging over the lists and the audit log: `Link` rel=next first, else page+1 until an empty or short page. */

/** One page of a list. */
export interface Page<T> {
  items: T[];
  /** The page number that was asked for (1-based). */
  page: number;
  /** `X-Total-Count`: items over all pages; undefined when the server did not send it. */
  totalCount: number | undefined;
  /** The next page's number, or null on the last page. */
  nextPage: number | null;
}

/** The spec's page size (50) and highest page number (200). */
const PAGE_SIZE = 50;
const MAX_PAGE = 200;

/** Parses an RFC 8288 `Link` header into rel → URL (the first link of each rel wins). */
export function parseLinkHeader(header: string | null | undefined): Map<string, string> {
  const links = new Map<string, string>();
  if (!header) return links;
  // Split on commas that start a new `<…>` item (URLs may contain commas).
  for (const part of header.split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]*)>(.*)$/.exec(part);
    if (!match) continue;
    const [, url, params] = match as unknown as [string, string, string];
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(params);
    const rels = (rel?.[1] ?? rel?.[2] ?? '').split(/\s+/).filter(Boolean);
    for (const r of rels) if (!links.has(r.toLowerCase())) links.set(r.toLowerCase(), url);
  }
  return links;
}

/** Reads the page metadata of a list response. */
export function pageFromResponse<T>(items: T[], page: number, headers: Headers, baseUrl: string): Page<T> {
  const total = headers.get('X-Total-Count');
  const totalCount = total !== null && /^\d+$/.test(total.trim()) ? Number(total.trim()) : undefined;
  const linkHeader = headers.get('Link');
  let nextPage: number | null;
  if (linkHeader !== null) {
    const next = parseLinkHeader(linkHeader).get('next');
    const nextNumber = next ? Number(new URL(next, baseUrl).searchParams.get('page') ?? NaN) : NaN;
    nextPage = Number.isInteger(nextNumber) && nextNumber > page ? nextNumber : null;
  } else if (items.length === 0) {
    nextPage = null;
  } else if (totalCount !== undefined) {
    nextPage = (page - 1) * PAGE_SIZE + items.length < totalCount ? page + 1 : null;
  } else {
    nextPage = items.length >= PAGE_SIZE ? page + 1 : null;
  }
  if (nextPage !== null && nextPage > MAX_PAGE) nextPage = null;
  return { items, page, totalCount, nextPage };
}

/** Walks the pages lazily, from `startPage`, yielding every item. */
export async function* iteratePages<T>(
  fetchPage: (page: number) => Promise<Page<T>>,
  startPage = 1,
): AsyncGenerator<T, void, undefined> {
  let page: number | null = startPage;
  while (page !== null) {
    const current: Page<T> = await fetchPage(page);
    yield* current.items;
    page = current.nextPage;
  }
}
