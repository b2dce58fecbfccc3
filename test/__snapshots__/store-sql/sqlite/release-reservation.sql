UPDATE api_keys SET reserved = reserved - ? WHERE id = ?
