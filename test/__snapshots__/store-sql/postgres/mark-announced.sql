UPDATE tasks SET announced = 1 WHERE id = $1 AND announced = 0
