"""Developer tools: measurements of the daemon's rules on labelled fixtures."""
