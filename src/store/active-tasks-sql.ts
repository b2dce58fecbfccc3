import type { Dialect } from './dialect.js';

const ACTIVE = `('queued', 'processing')`;

/**
 * The triggers that keep `api_keys.active_tasks` (migration 16): every statement that inserts,
 * ends or deletes an active task moves its key's count in that statement's transaction, so the
 * count is exact whatever path wrote the rows (a create, any settle, a cancel, the sweep of
 * abandoned tasks). A key without a row (store-level tasks) is counted nowhere.
 *
 * PostgreSQL: statement triggers over the transition tables that lock the keys in id order
 * before changing them, as the charge trigger does (migration 9), so batches of creates and
 * settles over the same keys never take two keys' rows in opposite orders.
 */
export function activeTaskTriggers(dialect: Dialect): readonly string[] {
  if (dialect === 'sqlite') {
    return [
      `CREATE TRIGGER tasks_active_insert AFTER INSERT ON tasks WHEN NEW.status IN ${ACTIVE}
       BEGIN UPDATE api_keys SET active_tasks = active_tasks + 1 WHERE id = NEW.owner; END`,
      `CREATE TRIGGER tasks_active_final AFTER UPDATE OF status ON tasks
       WHEN OLD.status IN ${ACTIVE} AND NEW.status NOT IN ${ACTIVE}
       BEGIN UPDATE api_keys SET active_tasks = active_tasks - 1 WHERE id = NEW.owner; END`,
      `CREATE TRIGGER tasks_active_delete AFTER DELETE ON tasks WHEN OLD.status IN ${ACTIVE}
       BEGIN UPDATE api_keys SET active_tasks = active_tasks - 1 WHERE id = OLD.owner; END`,
    ];
  }
  const moved = (relation: string, sign: '+' | '-'): string => `
       PERFORM 1 FROM api_keys WHERE id IN (SELECT owner FROM ${relation}) ORDER BY id FOR UPDATE;
       UPDATE api_keys k SET active_tasks = k.active_tasks ${sign} c.n
         FROM (SELECT owner, count(*) AS n FROM ${relation} GROUP BY owner) AS c WHERE k.id = c.owner;`;
  return [
    `CREATE OR REPLACE FUNCTION mediagate_active_insert() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       ${moved(`(SELECT owner FROM active_new WHERE status IN ${ACTIVE}) AS a`, '+')}
       RETURN NULL;
     END $$`,
    `CREATE TRIGGER tasks_active_insert AFTER INSERT ON tasks REFERENCING NEW TABLE AS active_new
       FOR EACH STATEMENT EXECUTE FUNCTION mediagate_active_insert()`,
    `CREATE OR REPLACE FUNCTION mediagate_active_final() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       IF NOT EXISTS (SELECT 1 FROM active_new n JOIN active_old o ON o.id = n.id
                       WHERE o.status IN ${ACTIVE} AND n.status NOT IN ${ACTIVE}) THEN
         RETURN NULL;
       END IF;
       ${moved(`(SELECT n.owner FROM active_new n JOIN active_old o ON o.id = n.id WHERE o.status IN ${ACTIVE} AND n.status NOT IN ${ACTIVE}) AS a`, '-')}
       RETURN NULL;
     END $$`,
    `CREATE TRIGGER tasks_active_final AFTER UPDATE ON tasks REFERENCING OLD TABLE AS active_old NEW TABLE AS active_new
       FOR EACH STATEMENT EXECUTE FUNCTION mediagate_active_final()`,
    `CREATE OR REPLACE FUNCTION mediagate_active_delete() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       ${moved(`(SELECT owner FROM active_old WHERE status IN ${ACTIVE}) AS a`, '-')}
       RETURN NULL;
     END $$`,
    `CREATE TRIGGER tasks_active_delete AFTER DELETE ON tasks REFERENCING OLD TABLE AS active_old
       FOR EACH STATEMENT EXECUTE FUNCTION mediagate_active_delete()`,
  ];
}
