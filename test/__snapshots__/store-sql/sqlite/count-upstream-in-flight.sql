SELECT COALESCE(sum(s.held), 0) AS n FROM channel_slots AS s WHERE s.channel = ?
