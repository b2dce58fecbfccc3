INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING
