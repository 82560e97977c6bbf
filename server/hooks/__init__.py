"""The host hooks: every terminal agent reaches the daemon through its own hooks (docs/hooks.md)."""
