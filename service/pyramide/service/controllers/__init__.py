"""HTTP controllers, one per domain; each handler is load → engine → save and nothing more."""
