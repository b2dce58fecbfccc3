UPDATE tasks SET announced = 1 WHERE id = ANY($1::text[]) AND announced = 0
