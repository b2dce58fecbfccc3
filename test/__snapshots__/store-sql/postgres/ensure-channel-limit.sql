INSERT INTO channel_limits (channel, bucket, next_free_at) VALUES ($1, $2, 0) ON CONFLICT (channel, bucket) DO NOTHING
