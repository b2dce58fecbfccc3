SELECT bytes AS n FROM key_inputs WHERE owner = $1
