"""Jinja templates of the reports (shipped in the wheel as the package data of auditor.templates)."""
