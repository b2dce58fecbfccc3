SELECT key_id AS key_id,
              CASE WHEN $1 = 1 THEN model ELSE '' END AS model,
              CASE WHEN $2 = 1 THEN day ELSE '' END AS day,
              sum(tasks) AS tasks, sum(seconds) AS seconds, sum(images) AS images, sum(cost) AS cost
         FROM usage_daily
        WHERE key_id = $3 AND day >= $4 AND day < $5
        GROUP BY 1, 2, 3
        ORDER BY 3, 2, 1
