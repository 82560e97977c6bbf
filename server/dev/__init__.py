"""Developer tools: evaluations that print figures."""
