SELECT s.owner, s.held FROM channel_slots AS s WHERE s.channel = $1 AND s.held > 0
