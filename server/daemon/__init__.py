"""The shared daemon: one per user, one warm core per workspace (docs/hooks.md)."""
