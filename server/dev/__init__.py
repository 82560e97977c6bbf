"""Developer tools: evaluations over labelled fixtures, run by hand or from the CLI."""
