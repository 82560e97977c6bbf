"""The read side: one recall (fast phase, model phase, exclusion set), the network's
join, `memory/search`, `memory/explain`, and the prompt block that gets injected."""
