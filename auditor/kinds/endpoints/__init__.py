"""Endpoints (real-time, async, serverless; their variants and inference components) as a resource
kind: discovery, metrics, assessment, rules, plans and their changes."""
