INSERT INTO key_inputs (owner, bytes) VALUES (?, CAST(? AS INTEGER))
  ON CONFLICT (owner) DO UPDATE SET bytes = key_inputs.bytes + excluded.bytes
