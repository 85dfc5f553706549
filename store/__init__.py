"""convstore: a SQL-backed conversation store for AI agents."""
