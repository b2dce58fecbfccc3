import type { Database as BetterSqlite3Database, Statement } from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

/**
 * Kysely's SQLite driver prepares a statement for every query; preparing costs more than
 * running a point read. The SQL texts Kysely emits are parameterised and few, so prepared
 * statements are kept by text (bounded: `IN (...)` lists vary in length).
 */
export function withStatementCache(database: BetterSqlite3Database, limit = 256): SqliteDatabase {
  const cache = new Map<string, Statement>();
  return {
    close: () => database.close(),
    prepare(sql: string): SqliteStatement {
      let statement = cache.get(sql);
      if (!statement) {
        statement = database.prepare(sql);
        if (cache.size >= limit) cache.delete(cache.keys().next().value ?? '');
        cache.set(sql, statement);
      }
      return statement as unknown as SqliteStatement;
    },
  };
}
