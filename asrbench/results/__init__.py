"""Result cells, their summary.json schema and the leaderboard built from them."""
