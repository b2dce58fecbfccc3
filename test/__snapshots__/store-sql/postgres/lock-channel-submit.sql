SELECT channel FROM channel_limits WHERE channel = $1 AND bucket = 'submit' FOR UPDATE
