UPDATE tasks SET announced = 1 WHERE id = ? AND announced = 0
