INSERT INTO key_inputs (owner, bytes) VALUES ($1, CAST($2 AS BIGINT))
  ON CONFLICT (owner) DO UPDATE SET bytes = key_inputs.bytes + excluded.bytes
