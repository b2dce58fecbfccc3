SELECT s.owner, s.held FROM channel_slots AS s WHERE s.channel = ? AND s.held > 0
