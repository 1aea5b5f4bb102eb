"""Bot processes: spawning, bounded line reading, deadlines, and ending process trees."""
