INSERT INTO key_inputs (owner, bytes)
       SELECT CAST(? AS TEXT), CAST(? AS INTEGER) WHERE CAST(? AS INTEGER) <= 0 OR ? <= ?
  ON CONFLICT (owner) DO UPDATE SET bytes = key_inputs.bytes + excluded.bytes
       WHERE ? <= 0 OR key_inputs.bytes + excluded.bytes <= ?
