"""The write side: deciding and making changes to memory files."""
