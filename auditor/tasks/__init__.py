"""The tasks a user or the scheduler runs: the audit with its history and mail, and the weekly
digest. The CLI commands and the scheduler call the same functions; the CLI prints, the
scheduler logs."""
