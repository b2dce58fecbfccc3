SELECT p.owner, p.channel,
                    max(COALESCE((SELECT r.fair_rank + 1 FROM tasks AS r WHERE r.owner = p.owner AND r.channel = p.channel AND r.status IN ('queued', 'processing')
            ORDER BY r.fair_rank DESC LIMIT 1), 0), COALESCE((SELECT q.fair_rank FROM tasks AS q WHERE q.channel = p.channel AND q.status = 'queued' ORDER BY q.fair_rank LIMIT 1), 0)) AS base
               FROM (SELECT value ->> 0 AS owner, value ->> 1 AS channel FROM json_each(?)) AS p
