UPDATE key_inputs SET bytes = bytes - ? WHERE owner = ?
