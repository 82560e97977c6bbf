"""The write side: what may be written (the quality gate, the secret detector),
how it meets what is there (conflicts), and making the change."""
