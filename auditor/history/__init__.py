"""Audit history (SQLite): what each run found, for `audit history` and the weekly digest."""
