SELECT count(*) AS n FROM api_keys WHERE role = 'admin' AND revoked_at IS NULL AND NOT disabled
