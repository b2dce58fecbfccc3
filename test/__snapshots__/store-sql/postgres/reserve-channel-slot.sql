UPDATE channel_limits
         SET next_free_at = CASE WHEN next_free_at > $1 THEN next_free_at ELSE $1 END + $2
       WHERE channel = $3 AND bucket = $4
   RETURNING next_free_at - $2 AS at
