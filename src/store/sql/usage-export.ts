import { bytewise, operation } from '../dialect.js';
import type { Int } from '../rows.js';

/**
 * The spend export's pages (http/routes/usage-export.ts): the rollup's rows of a range of days,
 * one per key x model x day, with the key's name, in (day, key, model) order, read a page at a
 * time after the last row of the previous page (keyset paging: each page is an index range scan,
 * whatever the page number, and the reader holds one page at a time).
 */

export interface UsageExportRow {
  key_id: string;
  /** The key's name; '' for a key that is no longer in the table. */
  key_name: string;
  model: string;
  day: string;
  tasks: Int;
  seconds: Int;
  images: Int;
  cost: Int;
}

export interface UsageExportParams {
  startDay: string;
  endDay: string;
  /** The (day, key, model) of the previous page's last row; '' before the first page. */
  afterDay: string;
  afterKey: string;
  afterModel: string;
  limit: number;
}

export const usageExportPage = operation<UsageExportParams, UsageExportRow>(
  'usage-export-page',
  // Byte order on both databases, so that the order and the cursor's comparisons agree.
  (dialect) => {
    const b = bytewise(dialect);
    return `SELECT u.key_id, COALESCE(k.name, '') AS key_name, u.model, u.day, u.tasks, u.seconds, u.images, u.cost
         FROM usage_daily u LEFT JOIN api_keys k ON k.id = u.key_id
        WHERE u.day >= @startDay AND u.day < @endDay
          AND (u.day > @afterDay OR (u.day = @afterDay AND (u.key_id ${b} > @afterKey OR (u.key_id = @afterKey AND u.model ${b} > @afterModel))))
        ORDER BY u.day, u.key_id ${b}, u.model ${b}
        LIMIT @limit`;
  },
);
