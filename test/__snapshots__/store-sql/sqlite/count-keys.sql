SELECT count(*) AS n FROM api_keys
