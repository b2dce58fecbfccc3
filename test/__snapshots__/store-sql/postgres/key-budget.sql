SELECT budget FROM api_keys WHERE id = $1
