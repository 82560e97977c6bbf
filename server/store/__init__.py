"""The write side's pure services: what may be written (the quality gate, the secret detector)."""
