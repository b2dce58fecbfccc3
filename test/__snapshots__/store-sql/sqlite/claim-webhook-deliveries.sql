UPDATE webhook_deliveries SET lease_owner = ?, next_attempt_at = ?, attempts = attempts + 1, updated_at = ?
       WHERE id IN (
         SELECT claimable.id FROM webhook_deliveries claimable JOIN (
           SELECT open_endpoints.id, open_endpoints.next_attempt_at, open_endpoints.owner,
                  ROW_NUMBER() OVER (PARTITION BY open_endpoints.owner ORDER BY open_endpoints.next_attempt_at, open_endpoints.id) AS key_rank
             FROM (
               SELECT due.id, due.owner, due.next_attempt_at,
                      ROW_NUMBER() OVER (PARTITION BY due.endpoint_id ORDER BY due.next_attempt_at, due.id) AS endpoint_rank,
                      (SELECT count(*) FROM webhook_deliveries busy
                        WHERE busy.lease_owner IS NOT NULL AND busy.owner = due.owner AND busy.endpoint_id = due.endpoint_id
                          AND busy.next_attempt_at > ?) AS endpoint_busy
                 FROM webhook_endpoints endpoint
                 JOIN webhook_deliveries due ON due.id IN (
                        SELECT head.id FROM webhook_deliveries head
                         WHERE head.endpoint_id = endpoint.id AND head.status = 'pending' AND head.next_attempt_at <= ?
                         ORDER BY head.next_attempt_at, head.id LIMIT ?)
             ) open_endpoints
            WHERE open_endpoints.endpoint_rank + open_endpoints.endpoint_busy <= ?
         ) fair ON fair.id = claimable.id
          WHERE claimable.status = 'pending' AND claimable.next_attempt_at <= ?
            AND fair.key_rank + (SELECT count(*) FROM webhook_deliveries busy
                                  WHERE busy.lease_owner IS NOT NULL AND busy.owner = fair.owner AND busy.next_attempt_at > ?) <= ?
          ORDER BY fair.key_rank, fair.next_attempt_at, fair.id
          LIMIT ? )
   RETURNING id, endpoint_id, type, task_id, status, attempts, next_attempt_at, lease_owner, last_status_code, last_error, created_at, updated_at, payload
