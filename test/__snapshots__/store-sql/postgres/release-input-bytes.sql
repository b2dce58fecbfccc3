UPDATE key_inputs SET bytes = bytes - $1 WHERE owner = $2
