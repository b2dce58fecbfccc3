SELECT status, count(*) AS n FROM tasks GROUP BY status
