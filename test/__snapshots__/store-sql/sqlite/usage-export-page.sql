SELECT u.key_id, COALESCE(k.name, '') AS key_name, u.model, u.day, u.tasks, u.seconds, u.images, u.cost
         FROM usage_daily u LEFT JOIN api_keys k ON k.id = u.key_id
        WHERE u.day >= ? AND u.day < ?
          AND (u.day > ? OR (u.day = ? AND (u.key_id COLLATE BINARY > ? OR (u.key_id = ? AND u.model COLLATE BINARY > ?))))
        ORDER BY u.day, u.key_id COLLATE BINARY, u.model COLLATE BINARY
        LIMIT ?
