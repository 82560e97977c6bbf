"""`python -m memory_recall.server`: the same command line as `memory-recall`."""

from memory_recall.server.cli.entry import main

if __name__ == "__main__":
    raise SystemExit(main())
