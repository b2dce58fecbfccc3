SELECT params FROM tasks
          WHERE owner = $1 AND status IN ('queued', 'processing') AND params LIKE '%mediagate-input:%'
