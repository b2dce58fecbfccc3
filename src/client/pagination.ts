/**
 * One page of a list (decisions §8.2: newest first, `has_more`, `last_id`), which is also an async
 * iterable over every item of this page and all pages after it: the next page is fetched with
 * `after = last_id` while `has_more` is true.
 *
 * ```ts
 * const page = await client.videos.list({ status: 'completed', limit: 50 });
 * page.data;                                      // this page only
 * for await (const task of page) console.log(task.id); // every page, fetched as needed
 * ```
 */
export class Page<T> implements AsyncIterable<T> {
  /** The items of this page, newest first. */
  readonly data: readonly T[];
  readonly hasMore: boolean;
  /** The id of this page's last item; null when the page is empty. */
  readonly lastId: string | null;
  readonly #fetchAfter: (after: string) => Promise<Page<T>>;

  constructor(init: { data: readonly T[]; hasMore: boolean; lastId: string | null }, fetchAfter: (after: string) => Promise<Page<T>>) {
    this.data = init.data;
    this.hasMore = init.hasMore;
    this.lastId = init.lastId;
    this.#fetchAfter = fetchAfter;
  }

  hasNextPage(): boolean {
    return this.hasMore && this.lastId !== null;
  }

  /** The page after this one; null when this is the last. */
  async nextPage(): Promise<Page<T> | null> {
    if (!this.hasNextPage() || this.lastId === null) return null;
    return this.#fetchAfter(this.lastId);
  }

  /** Every page from this one on. */
  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    yield this;
    for (let page = await this.nextPage(); page; page = await page.nextPage()) yield page;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }
}
