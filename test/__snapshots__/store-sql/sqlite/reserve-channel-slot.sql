UPDATE channel_limits
         SET next_free_at = CASE WHEN next_free_at > ? THEN next_free_at ELSE ? END + ?
       WHERE channel = ? AND bucket = ?
   RETURNING next_free_at - ? AS at
