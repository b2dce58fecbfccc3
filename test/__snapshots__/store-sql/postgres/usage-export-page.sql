SELECT u.key_id, COALESCE(k.name, '') AS key_name, u.model, u.day, u.tasks, u.seconds, u.images, u.cost
         FROM usage_daily u LEFT JOIN api_keys k ON k.id = u.key_id
        WHERE u.day >= $1 AND u.day < $2
          AND (u.day > $3 OR (u.day = $3 AND (u.key_id COLLATE "C" > $4 OR (u.key_id = $4 AND u.model COLLATE "C" > $5))))
        ORDER BY u.day, u.key_id COLLATE "C", u.model COLLATE "C"
        LIMIT $6
