UPDATE api_keys SET reserved = reserved - $1 WHERE id = $2
