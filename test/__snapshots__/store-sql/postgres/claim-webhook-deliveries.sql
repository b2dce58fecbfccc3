UPDATE webhook_deliveries SET lease_owner = $1, next_attempt_at = $2, attempts = attempts + 1, updated_at = $3
       WHERE id IN (
         SELECT claimable.id FROM webhook_deliveries claimable JOIN (
           SELECT open_endpoints.id, open_endpoints.next_attempt_at, open_endpoints.owner,
                  ROW_NUMBER() OVER (PARTITION BY open_endpoints.owner ORDER BY open_endpoints.next_attempt_at, open_endpoints.id) AS key_rank
             FROM (
               SELECT due.id, due.owner, due.next_attempt_at,
                      ROW_NUMBER() OVER (PARTITION BY due.endpoint_id ORDER BY due.next_attempt_at, due.id) AS endpoint_rank,
                      (SELECT count(*) FROM webhook_deliveries busy
                        WHERE busy.lease_owner IS NOT NULL AND busy.owner = due.owner AND busy.endpoint_id = due.endpoint_id
                          AND busy.next_attempt_at > $3) AS endpoint_busy
                 FROM webhook_endpoints endpoint
                 JOIN webhook_deliveries due ON due.id IN (
                        SELECT head.id FROM webhook_deliveries head
                         WHERE head.endpoint_id = endpoint.id AND head.status = 'pending' AND head.next_attempt_at <= $3
                         ORDER BY head.next_attempt_at, head.id LIMIT $4)
             ) open_endpoints
            WHERE open_endpoints.endpoint_rank + open_endpoints.endpoint_busy <= $4
         ) fair ON fair.id = claimable.id
          WHERE claimable.status = 'pending' AND claimable.next_attempt_at <= $3
            AND fair.key_rank + (SELECT count(*) FROM webhook_deliveries busy
                                  WHERE busy.lease_owner IS NOT NULL AND busy.owner = fair.owner AND busy.next_attempt_at > $3) <= $5
          ORDER BY fair.key_rank, fair.next_attempt_at, fair.id
          LIMIT $6 FOR UPDATE OF claimable SKIP LOCKED)
   RETURNING id, endpoint_id, type, task_id, status, attempts, next_attempt_at, lease_owner, last_status_code, last_error, created_at, updated_at, payload
