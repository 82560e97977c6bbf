"""The command line: the user's commands, and the developers' behind `memory-recall dev`."""
