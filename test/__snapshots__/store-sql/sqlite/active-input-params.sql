SELECT params FROM tasks
          WHERE owner = ? AND status IN ('queued', 'processing') AND params LIKE '%mediagate-input:%'
