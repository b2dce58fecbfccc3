INSERT INTO key_inputs (owner, bytes)
       SELECT CAST($1 AS TEXT), CAST($2 AS BIGINT) WHERE CAST($3 AS BIGINT) <= 0 OR $2 <= $3
  ON CONFLICT (owner) DO UPDATE SET bytes = key_inputs.bytes + excluded.bytes
       WHERE $3 <= 0 OR key_inputs.bytes + excluded.bytes <= $3
