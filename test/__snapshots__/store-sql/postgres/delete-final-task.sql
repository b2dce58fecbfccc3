WITH gone AS (DELETE FROM tasks WHERE id = $1 AND owner = $2 AND status IN ('completed', 'failed', 'cancelled') RETURNING id, outputs)
       SELECT id, outputs FROM gone, LATERAL (SELECT pg_notify('mediagate_task', gone.id)) AS told
