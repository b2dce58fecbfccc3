SELECT min(t.next_check_at) AS due FROM tasks AS t WHERE t.channel <> 'sandbox' AND t.status IN ('queued', 'processing')
