"""Notebook instances and Studio (domains, spaces, apps) as one resource kind: discovery, costs,
rules and their changes."""
